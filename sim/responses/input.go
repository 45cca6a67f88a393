package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// wireItem is an input item as a client sends it. A message may omit its
// type (EasyInputMessage); content is a string or a list of parts.
type wireItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	// EncryptedContent is a reasoning item's: a string or null.
	EncryptedContent *string `json:"encrypted_content"`
}

type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// decodeInput reads input: a string (one user message) or a list of items.
func decodeInput(raw json.RawMessage) ([]item, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, core.ErrMissingParam("input")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, core.ErrInvalidJSON()
		}
		return []item{{ID: "msg_" + core.RandomID(), Type: "message", Role: "user", Text: s}}, nil
	}
	if raw[0] != '[' {
		return nil, core.ErrInvalidType("input", "one of a string or array of objects", core.JSONKind(raw))
	}
	var wire []json.RawMessage
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, core.JSONError(err, "input")
	}
	out := make([]item, 0, len(wire))
	for i, w := range wire {
		it, err := decodeItem(w, fmt.Sprintf("input[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

func decodeItem(raw json.RawMessage, p string) (item, error) {
	var w wireItem
	if err := json.Unmarshal(raw, &w); err != nil {
		return item{}, core.JSONError(err, p)
	}
	if w.Type == "" && w.Role != "" {
		w.Type = "message"
	}
	it := item{ID: w.ID, Type: w.Type}
	switch w.Type {
	case "message":
		switch w.Role {
		case "user", "assistant", "system", "developer":
		case "":
			return item{}, core.ErrMissingParam(p + ".role")
		default:
			return item{}, core.ErrInvalidValue(p+".role", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'user', 'assistant', 'system', and 'developer'.", w.Role))
		}
		text, err := partsText(w.Content, p+".content", w.Role)
		if err != nil {
			return item{}, err
		}
		it.Role, it.Text = w.Role, text
		if it.ID == "" {
			it.ID = "msg_" + core.RandomID()
		}
	case "function_call":
		switch {
		case w.CallID == "":
			return item{}, core.ErrMissingParam(p + ".call_id")
		case w.Name == "":
			return item{}, core.ErrMissingParam(p + ".name")
		case w.Arguments == nil:
			return item{}, core.ErrMissingParam(p + ".arguments")
		}
		it.CallID, it.Name, it.Arguments = w.CallID, w.Name, *w.Arguments
		if it.ID == "" {
			it.ID = "fc_" + core.RandomID()
		}
	case "function_call_output":
		if w.CallID == "" {
			return item{}, core.ErrMissingParam(p + ".call_id")
		}
		out, err := callOutputText(w.Output, p+".output")
		if err != nil {
			return item{}, err
		}
		it.CallID, it.Output = w.CallID, out
		if it.ID == "" {
			it.ID = "fco_" + core.RandomID()
		}
	case "reasoning":
		if it.ID == "" {
			return item{}, core.ErrMissingParam(p + ".id")
		}
		if w.EncryptedContent != nil {
			it.Encrypted = *w.EncryptedContent
		}
	case "":
		return item{}, core.ErrMissingParam(p + ".type")
	default:
		return item{}, core.ErrInvalidValue(p+".type", fmt.Sprintf("Invalid value: '%s'. The simulator supports 'message', 'function_call', 'function_call_output' and 'reasoning' items.", w.Type))
	}
	return it, nil
}

// partsText is a message's text: a string, or its input_text parts (a
// user, system or developer message) or output_text parts (an assistant
// message; refusals carry no text).
func partsText(raw json.RawMessage, p, role string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", core.ErrMissingParam(p)
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", core.ErrInvalidJSON()
		}
		return s, nil
	case '[':
	default:
		return "", core.ErrInvalidType(p, "one of a string or array of objects", core.JSONKind(raw))
	}
	var parts []wirePart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", core.JSONError(err, p)
	}
	want := "input_text"
	if role == "assistant" {
		want = "output_text"
	}
	var b strings.Builder
	for i, part := range parts {
		switch part.Type {
		case want:
			b.WriteString(part.Text)
		case "refusal", "input_image", "input_file", "input_audio":
		default:
			return "", core.ErrInvalidValue(fmt.Sprintf("%s[%d].type", p, i), fmt.Sprintf("Invalid value: '%s'. Supported values are: '%s', 'input_image', 'input_file', and 'refusal'.", part.Type, want))
		}
	}
	return b.String(), nil
}

// callOutputText is a function_call_output's output: a string, or text parts.
func callOutputText(raw json.RawMessage, p string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", core.ErrMissingParam(p)
	}
	if raw[0] == '[' {
		return partsText(raw, p, "user")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", core.ErrInvalidType(p, "one of a string or array of objects", core.JSONKind(raw))
	}
	return s, nil
}

// checkPairing applies the API's rule that every function_call in the
// conversation has its function_call_output and every output its call.
func checkPairing(items []item) error {
	calls := map[string]bool{}
	answered := map[string]bool{}
	for _, it := range items {
		switch it.Type {
		case "function_call":
			calls[it.CallID] = true
		case "function_call_output":
			if !calls[it.CallID] {
				return core.ErrInvalidRequest("input", fmt.Sprintf("No tool call found for function call output with call_id %s.", it.CallID))
			}
			answered[it.CallID] = true
		}
	}
	for _, it := range items {
		if it.Type == "function_call" && !answered[it.CallID] {
			return core.ErrInvalidRequest("input", fmt.Sprintf("No tool output found for function call %s.", it.CallID))
		}
	}
	return nil
}

// chat translates a conversation into the script engine's terms, so the
// same scripts, counts and cache answer both APIs: instructions are a
// system message, consecutive function_call items one assistant message's
// tool calls, each function_call_output a tool message.
func (r *createRequest) chat(conv []item) *openai.ChatRequest {
	stream := r.stream()
	req := &openai.ChatRequest{Model: r.Model, Stream: &stream, ParallelToolCalls: r.ParallelToolCalls, Choice: r.choice}
	if r.Instructions != nil && *r.Instructions != "" {
		req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "system", Text: *r.Instructions})
	}
	for _, it := range conv {
		switch it.Type {
		case "message":
			req.Msgs = append(req.Msgs, openai.ChatMessage{Role: it.Role, Text: it.Text})
		case "function_call":
			tc := openai.MsgToolCall{ID: it.CallID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = it.Name, it.Arguments
			if n := len(req.Msgs); n > 0 && req.Msgs[n-1].Role == "assistant" {
				req.Msgs[n-1].ToolCalls = append(req.Msgs[n-1].ToolCalls, tc)
			} else {
				req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "assistant", ToolCalls: []openai.MsgToolCall{tc}})
			}
		case "function_call_output":
			req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "tool", ToolCallID: it.CallID, Text: it.Output})
		}
	}
	for _, t := range r.Tools {
		var ct openai.ChatTool
		ct.Type = "function"
		ct.Function.Name, ct.Function.Parameters, ct.Function.Strict = t.Name, t.Parameters, t.Strict
		if t.Description != nil {
			ct.Function.Description = *t.Description
		}
		req.Tools = append(req.Tools, ct)
	}
	return req
}
