package tools

import (
	"encoding/json"

	"github.com/voxgate/voxgate/safety"
)

// guard is the write guard of DESIGN §12, one for every tool: built-in,
// webhook, SQL or MCP. Before a body runs, the numeric ranges are checked
// on the arguments the tool declares as measures (a value out of range
// blocks the call: unsafe_value), and in dry run a write tool that makes
// no proposal of its own is not run at all: the executor answers with the
// proposal, so a webhook write is never called. ok is false when the
// outcome is the guard's and the body must not run.
func (e *Executor) guard(t *Tool, inv Invocation) (o Outcome, ok bool) {
	if flags := safety.CheckArguments(inv.Args, t.Measures); len(flags) > 0 {
		problems := make([]string, len(flags))
		for i, f := range flags {
			problems[i] = f.Message
		}
		return Outcome{
			Data:  map[string]any{"written": false, "reason": safety.UnsafeValue, "flags": flags},
			Model: map[string]any{"written": false, "reason": safety.UnsafeValue, "problems": problems},
			Flags: flags,
		}, false
	}
	if !e.dryRun || !t.Writes() || t.Proposes {
		return Outcome{}, true
	}
	writes := make([]DBWrite, 0, max(len(t.WritesTo), 1))
	for _, table := range t.WritesTo {
		writes = append(writes, DBWrite{Table: table, Operation: "call", Data: inv.Args, DryRun: true})
	}
	if len(writes) == 0 {
		writes = append(writes, DBWrite{Table: t.Name, Operation: "call", Data: inv.Args, DryRun: true})
	}
	return Outcome{
		Data: map[string]any{"written": false, "dry_run": true,
			"proposal": map[string]any{"tool": t.Name, "arguments": json.RawMessage(inv.Args)}},
		Model:  map[string]any{"written": false, "dry_run": true, "note": "Dry run: nothing was changed."},
		Writes: writes,
	}, false
}
