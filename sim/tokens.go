package sim

import (
	"bytes"
	"encoding/json"
)

// Token counts are deterministic so billing tests can predict them exactly:
// tokens = ceil(bytes / 4) over UTF-8 text. docs/sim.md lists exactly which
// bytes are counted; keep the two in step.

// tokensFor returns ceil(n / 4) for a byte count.
func tokensFor(n int) int { return (n + 3) / 4 }

// promptBytes counts the request's bytes that make up the prompt: each
// message's text content (string content, or the concatenated text of its
// text parts), each assistant tool call's function name and arguments, and
// each tool's function name, description and compacted parameters JSON.
// Roles, names, ids and all other fields are not counted.
func promptBytes(req *chatRequest) int {
	n := 0
	for i := range req.msgs {
		m := &req.msgs[i]
		n += len(m.text)
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	for i := range req.Tools {
		f := &req.Tools[i].Function
		n += len(f.Name) + len(f.Description) + compactLen(f.Parameters)
	}
	return n
}

// compactLen is the length of raw JSON without insignificant whitespace, so
// the count does not depend on how the client indents its schemas.
func compactLen(raw json.RawMessage) int {
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return len(raw)
	}
	return b.Len()
}

// completionBytes counts the reply: its text content plus each tool call's
// function name and arguments.
func completionBytes(text string, calls []toolCall) int {
	n := len(text)
	for _, c := range calls {
		n += len(c.Name) + len(c.Arguments)
	}
	return n
}
