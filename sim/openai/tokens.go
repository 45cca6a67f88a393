package openai

import (
	"bytes"
	"encoding/json"
)

// Token counts are deterministic so billing tests can predict them exactly:
// tokens = ceil(bytes / 4) over UTF-8 text. docs/sim.md lists exactly which
// bytes are counted; keep the two in step.

// TokensFor returns ceil(n / 4) for a byte count.
func TokensFor(n int) int { return (n + 3) / 4 }

// PromptBytes counts the request's bytes that make up the prompt: the text
// of every piece promptPieces yields.
func PromptBytes(req *ChatRequest) int {
	n := 0
	promptPieces(req, func(_, text string) { n += len(text) })
	return n
}

// promptPieces yields the prompt's counted text in the order the model
// reads it, which is the order a cached prefix follows: each tool's
// function name, description and compacted parameters JSON; then each
// message's text content (string content, or the concatenated text of its
// text parts) and each of its tool calls' function name and arguments.
// Roles, names, ids and all other fields are not counted; kind names the
// piece's place (a role, or "tool") without being counted, so the same text
// in another place is another prompt.
func promptPieces(req *ChatRequest, yield func(kind, text string)) {
	for i := range req.Tools {
		f := &req.Tools[i].Function
		yield("tool", f.Name)
		yield("tool", f.Description)
		yield("tool", CompactJSON(f.Parameters))
	}
	for i := range req.Msgs {
		m := &req.Msgs[i]
		yield(m.Role, m.Text)
		for _, tc := range m.ToolCalls {
			yield("tool_call", tc.Function.Name)
			yield("tool_call", tc.Function.Arguments)
		}
	}
}

// CompactLen is the length of raw JSON without insignificant whitespace, so
// the count does not depend on how the client indents its schemas.
func CompactLen(raw json.RawMessage) int { return len(CompactJSON(raw)) }

// CompactJSON is raw without insignificant whitespace ("" for none; raw as
// sent if it does not parse).
func CompactJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// completionBytes counts the reply: its text content plus each tool call's
// function name and arguments.
func completionBytes(text string, calls []ToolCall) int {
	n := len(text)
	for _, c := range calls {
		n += len(c.Name) + len(c.Arguments)
	}
	return n
}
