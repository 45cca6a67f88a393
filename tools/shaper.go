package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/voxgate/voxgate/safety"
)

// Result is what a caller gets for one call: the voice tool-calls endpoint
// returns it as JSON, the chat loop feeds Output to the model and Cards,
// Partials, SafetyFlags and DBWrites to the app.
type Result struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Output is the compact JSON string for function_call_output, bounded
	// by the tool's max_tokens. On failure it holds {"error": {...}}.
	Output string `json:"output"`
	// Result is the structured result for the app.
	Result      json.RawMessage `json:"result"`
	Cards       []Card          `json:"cards,omitempty"`
	Partials    []Card          `json:"partials,omitempty"`
	SafetyFlags []safety.Flag   `json:"safety_flags"`
	DBWrites    []DBWrite       `json:"db_writes,omitempty"`
	// Error is set when the call failed (timeout, panic, the tool's own
	// error, interrupted). The call is still a normal response: the model
	// reads Output and carries on.
	Error *ToolError `json:"error,omitempty"`
	// Replayed is true when this is a stored result of an earlier call
	// with the same (session, call_id).
	Replayed bool `json:"replayed"`
	// Screened holds the ids of the filter rules the screen matched on the
	// call's arguments and cards (screen.go), for the caller's audit row.
	Screened []string `json:"-"`
}

// tokenBytes is the bytes-per-token estimate used to bound Output; the
// simulator and the billing estimates use the same ceil(bytes/4).
const tokenBytes = 4

// maxStringInOutput cuts long strings first when an output is too big.
const maxStringInOutput = 280

// shape turns a tool's Outcome into the Result the model and app see.
func shape(t *Tool, o Outcome) (Result, error) {
	data, err := json.Marshal(o.Data)
	if err != nil {
		return Result{}, fmt.Errorf("tools: %s: result: %w", t.Name, err)
	}
	modelView := o.Model
	if modelView == nil {
		modelView = o.Data
	}
	// Cards and writes are raw JSON from the tool; check them here, so a
	// bad one fails this call as the tool's fault, not the result's store.
	for _, c := range [][]Card{o.Cards, o.Partials} {
		for _, card := range c {
			if !json.Valid(card.Data) {
				return Result{}, fmt.Errorf("tools: %s: card %q: data is not JSON", t.Name, card.Kind)
			}
		}
	}
	for _, w := range o.Writes {
		if !json.Valid(w.Data) {
			return Result{}, fmt.Errorf("tools: %s: db write to %s: data is not JSON", t.Name, w.Table)
		}
	}
	mb := data
	if o.Model != nil {
		if mb, err = json.Marshal(modelView); err != nil {
			return Result{}, fmt.Errorf("tools: %s: model view: %w", t.Name, err)
		}
	}
	return Result{
		Name:        t.Name,
		Output:      boundCompact(mb, t.MaxTokens*tokenBytes),
		Result:      data,
		Cards:       o.Cards,
		Partials:    o.Partials,
		SafetyFlags: nonNilFlags(o.Flags),
		DBWrites:    o.Writes,
	}, nil
}

// shapeError is the Result of a failed call.
func shapeError(t *Tool, te *ToolError) Result {
	b := []byte(te.Output())
	return Result{
		Name:        t.Name,
		Output:      boundOutput(b, t.MaxTokens*tokenBytes),
		Result:      b,
		SafetyFlags: []safety.Flag{},
		Error:       te,
	}
}

func nonNilFlags(f []safety.Flag) []safety.Flag {
	if f == nil {
		return []safety.Flag{}
	}
	return f
}

// boundOutput returns b as compact JSON of at most limit bytes. Too-long
// values are cut structurally (long strings shortened, trailing array items
// dropped) and marked "truncated": true, so the model always gets valid
// JSON and knows it saw a part.
func boundOutput(b []byte, limit int) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err == nil {
		b = buf.Bytes()
	}
	return boundCompact(b, limit)
}

// boundCompact is boundOutput for b that is already compact, as
// json.Marshal's output is.
func boundCompact(b []byte, limit int) string {
	if len(b) <= limit {
		return string(b)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return tooLarge
	}
	holder := map[string]any{"v": cutStrings(v)}
	for i := 0; i < 100_000; i++ {
		out, err := json.Marshal(markTruncated(holder["v"]))
		if err != nil {
			return tooLarge
		}
		if len(out) <= limit {
			return string(out)
		}
		// Cut in proportion to the excess so huge results converge fast.
		if !dropSome(holder, float64(len(out)-limit)/float64(len(out))) {
			break
		}
	}
	return tooLarge
}

const tooLarge = `{"truncated":true,"note":"The result was too large to show."}`

func markTruncated(v any) any {
	if m, ok := v.(map[string]any); ok {
		c := make(map[string]any, len(m)+1)
		for k, e := range m {
			c[k] = e
		}
		c["truncated"] = true
		return c
	}
	return map[string]any{"value": v, "truncated": true}
}

func cutStrings(v any) any {
	switch n := v.(type) {
	case string:
		if len(n) <= maxStringInOutput {
			return n
		}
		cut := maxStringInOutput
		for cut > 0 && !utf8.RuneStart(n[cut]) {
			cut--
		}
		return n[:cut] + "…"
	case map[string]any:
		for k, e := range n {
			n[k] = cutStrings(e)
		}
	case []any:
		for i, e := range n {
			n[i] = cutStrings(e)
		}
	}
	return v
}

// dropSome removes the trailing share frac (at least one item) of the
// longest array inside holder["v"],
// or else the largest field of a top-level object. It reports whether
// anything was removed. Keys are walked in sorted order so the same result
// is always cut the same way.
func dropSome(holder map[string]any, frac float64) bool {
	var best []any
	var set func([]any)
	var walk func(x any, setX func([]any))
	walk = func(x any, setX func([]any)) {
		switch n := x.(type) {
		case map[string]any:
			for _, k := range sortedKeys(n) {
				walk(n[k], func(a []any) { n[k] = a })
			}
		case []any:
			if len(n) > 0 && len(n) > len(best) {
				best, set = n, setX
			}
			for i := range n {
				walk(n[i], func(a []any) { n[i] = a })
			}
		}
	}
	walk(holder["v"], func(a []any) { holder["v"] = a })
	if set != nil {
		n := max(1, int(float64(len(best))*frac))
		set(best[:len(best)-n])
		return true
	}
	return dropField(holder["v"])
}

// dropField removes the largest field of a top-level object.
func dropField(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return false
	}
	largest, size := "", -1
	for _, k := range sortedKeys(m) {
		b, _ := json.Marshal(m[k])
		if len(b) > size {
			largest, size = k, len(b)
		}
	}
	delete(m, largest)
	return true
}
