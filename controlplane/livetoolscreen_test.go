package controlplane_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A GPT-Live delegation's tool call passes the same screen as every other
// (the executor's): the backend model puts a claim in the arguments, in
// English or in Spanish with no session language, and the tool never
// runs; the model reads the refusal and the voice still gets an answer;
// the call's audit row says medical_claim_blocked with the refusal's code.
func TestLiveDelegationToolCallScreened(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, claim string }{
		{"en", "Stop taking your insulin and eat more turmeric."},
		{"es", "Deja de tomar tu insulina y come más cúrcuma."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var runs int64
			no, yes := false, true
			script := sim.Script{Rules: []sim.Rule{
				{When: sim.When{Contains: []string{"pasta"}, ToolResults: &no},
					Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "echo", Arguments: map[string]any{"q": tc.claim}}}}},
				{When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "I could not look that up."}},
			}}
			f := newFixture(t, options{runs: &runs, backend: "gpt-4.1-mini", simCfg: oneTurn(script, simtest.ZeroLatency())})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, start, liveID := askLiveIn(t, ctx, f, "")
			if c := waitAppended(t, ctx, f, liveID, "session.commentary.append").Content; c != "I could not look that up." {
				t.Fatalf("commentary %q", c)
			}
			if n := atomic.LoadInt64(&runs); n != 0 {
				t.Fatalf("echo ran %d times with a claim in its arguments; want never", n)
			}
			var status, code string
			testkit.Eventually(t, ctx, "the tool call's audit row", func() bool {
				err := f.pool.QueryRow(ctx, `SELECT status, coalesce(error_code, '') FROM ai_audit_log
					WHERE session_id = $1 AND kind = 'voice_tool' AND status <> 'pending'`, start.SessionID).Scan(&status, &code)
				return err == nil
			})
			if status != "medical_claim_blocked" || !strings.Contains(code, "unsafe_arguments") {
				t.Fatalf("the tool call's audit row: %s, error code %q; want medical_claim_blocked, unsafe_arguments", status, code)
			}
		})
	}
}
