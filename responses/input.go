package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/safety"
)

// Item is one item of a conversation as voxgate keeps it: a message
// (role and text), a function call or a call's output. A stored
// response keeps its conversation as these, and a continuation reads
// them back, with each item's id (withIDs) for input_items.
type Item struct {
	ID        string `json:"id,omitempty"`
	Type      string `json:"type"` // message, function_call, function_call_output
	Role      string `json:"role,omitempty"`
	Text      string `json:"text,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Output    string `json:"output,omitempty"`
}

// wireItem is an input item as a client sends it: the fields of an
// EasyInputMessage, an InputMessage, an OutputMessage sent back, a
// function call and its output. Which of them an item may carry is
// checked by its type.
type wireItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Status    string          `json:"status"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

type textPart struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Annotations []json.RawMessage `json:"annotations"`
	Logprobs    []json.RawMessage `json:"logprobs"`
}

// callIDRE is an id every provider takes back (see llm.NewCallID).
var callIDRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,40}$`)

// Items reads input: a string (one user message) or a list of items.
func (r *CreateRequest) Items() ([]Item, error) {
	if !set(r.Input) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(r.Input, &s) == nil {
		return []Item{{Type: "message", Role: "user", Text: s}}, nil
	}
	var raws []json.RawMessage
	if json.Unmarshal(r.Input, &raws) != nil {
		return nil, invalidField("input", "a string or an array of items")
	}
	if len(raws) > maxItems {
		return nil, invalidField("input", "at most %d items", maxItems)
	}
	out := make([]Item, 0, len(raws))
	for i, raw := range raws {
		at := fmt.Sprintf("input[%d]", i)
		var w wireItem
		if err := decodeStrict(raw, &w); err != nil {
			return nil, invalidField(at, "a message, function_call or function_call_output item; %v", err)
		}
		it, err := w.item(at)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

func (w wireItem) item(at string) (Item, error) {
	switch w.Type {
	case "", "message":
		switch w.Role {
		case "user", "assistant", "system", "developer":
		default:
			return Item{}, invalidField(at+".role", "%q is not one of user, assistant, system, developer", w.Role)
		}
		text, err := contentText(w.Content, at+".content")
		if err != nil {
			return Item{}, err
		}
		return Item{ID: w.ID, Type: "message", Role: w.Role, Text: text}, nil
	case "function_call":
		if w.CallID == "" || !toolNameRE.MatchString(w.Name) || w.Arguments == nil {
			return Item{}, invalidField(at, "a function_call needs call_id, a valid name and arguments")
		}
		return Item{ID: w.ID, Type: "function_call", CallID: w.CallID, Name: w.Name, Arguments: *w.Arguments}, nil
	case "function_call_output":
		if w.CallID == "" {
			return Item{}, invalidField(at+".call_id", "required on a function_call_output")
		}
		out, err := contentText(w.Output, at+".output")
		if err != nil {
			return Item{}, err
		}
		return Item{ID: w.ID, Type: "function_call_output", CallID: w.CallID, Output: out}, nil
	}
	return Item{}, invalidField(at+".type", "%q is not served by this gateway; items are message, function_call or function_call_output", w.Type)
}

// contentText is content as one string: a string, or text parts
// (input_text, output_text) joined. Images, files and audio are refused
// by name: not every route's target takes them.
func contentText(raw json.RawMessage, at string) (string, error) {
	if !set(raw) {
		return "", invalidField(at, "required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return "", invalidField(at, "a string or an array of text parts")
	}
	var b strings.Builder
	for i, raw := range parts {
		var p textPart
		if err := decodeStrict(raw, &p); err != nil {
			return "", invalidField(fmt.Sprintf("%s[%d]", at, i), "a text part; %v", err)
		}
		if p.Type != "input_text" && p.Type != "output_text" {
			return "", invalidField(fmt.Sprintf("%s[%d].type", at, i), "only text parts are served, got %q", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// Messages turns instructions and the conversation into the messages
// the router gets, checked as the providers check a tool loop: each
// function_call_output answers an earlier call, each call is answered
// before the next message, and a call and its output carry one id. A
// client's call id that a provider might refuse is replaced by a stable
// safe one, the same in the call and its output.
func Messages(instructions string, items []Item) ([]llm.Message, error) {
	var out []llm.Message
	if instructions != "" {
		out = append(out, llm.Message{Role: llm.RoleSystem, Content: instructions})
	}
	pending := map[string]bool{}
	for i, it := range items {
		at := fmt.Sprintf("input[%d]", i)
		if it.Type != "function_call" && it.Type != "function_call_output" {
			for id := range pending {
				return nil, invalidField(at, "function call %q has no function_call_output before this item", id)
			}
		}
		switch it.Type {
		case "message":
			switch it.Role {
			case "system", "developer":
				out = append(out, llm.Message{Role: llm.RoleSystem, Content: it.Text})
			case "assistant":
				out = append(out, llm.Message{Role: llm.RoleAssistant, Content: it.Text})
			default:
				// The client's own text, sanitized as on every endpoint
				// (DESIGN §12): controls dropped, injection markers inert.
				clean := safety.Sanitize(it.Text)
				if strings.TrimSpace(clean) == "" {
					return nil, invalidField(at+".content", "a user message needs text")
				}
				out = append(out, llm.Message{Role: llm.RoleUser, Content: clean})
			}
		case "function_call":
			if pending[it.CallID] {
				return nil, invalidField(at+".call_id", "%q is used twice", it.CallID)
			}
			pending[it.CallID] = true
			call := llm.ToolCall{ID: safeCallID(it.CallID), Name: it.Name, Arguments: it.Arguments}
			// Calls right after an assistant message (or each other) are
			// that message's, as a provider expects them.
			if n := len(out); n > 0 && out[n-1].Role == llm.RoleAssistant {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
				continue
			}
			out = append(out, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}})
		case "function_call_output":
			if !pending[it.CallID] {
				return nil, invalidField(at+".call_id", "%q answers no function_call before it", it.CallID)
			}
			delete(pending, it.CallID)
			out = append(out, llm.Message{Role: llm.RoleTool, Content: it.Output, ToolCallID: safeCallID(it.CallID)})
		}
	}
	for id := range pending {
		return nil, invalidField("input", "function call %q has no function_call_output", id)
	}
	if len(out) == 0 || out[len(out)-1].Role == llm.RoleSystem {
		return nil, invalidField("input", "the conversation needs a message to answer")
	}
	return out, nil
}

// safeCallID keeps an id every provider takes, and replaces any other by
// a stable one derived from it.
func safeCallID(id string) string {
	if callIDRE.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "call_" + hex.EncodeToString(sum[:12])
}
