package completions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/safety"
)

// LLMRequest is the request the router gets, once the client's
// conversation is checked as the providers would check it (checkToolTurns):
// a conversation the client got wrong is its 400 here, before anything is
// admitted or a provider called, not a provider's refusal a client SDK
// retries. Client tool-call ids that a provider might refuse (too long,
// other characters) are replaced by safe ones, the same in the
// assistant's call and the tool's answer, so any route target takes the
// history. A client that asked for no stream has the provider asked for
// its answer whole, as a proxy would: one response to read, not a stream
// to assemble.
func (r *CompletionRequest) LLMRequest() (llm.Request, error) {
	out := llm.Request{Model: r.Model, ReasoningEffort: r.ReasoningEffort, Whole: !r.Stream}
	switch {
	case r.MaxCompletionTokens != nil:
		out.MaxOutputTokens = *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		out.MaxOutputTokens = *r.MaxTokens
	}
	for i, m := range r.Messages {
		msg, err := m.llmMessage(fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return llm.Request{}, err
		}
		out.Messages = append(out.Messages, msg)
	}
	if err := checkToolTurns(r.Messages); err != nil {
		return llm.Request{}, err
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, llm.ToolSpec{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters,
			Strict: t.Function.Strict != nil && *t.Function.Strict,
		})
	}
	if len(r.Tools) > 0 {
		// Without tools there is no call to make one or several of.
		out.ParallelToolCalls = r.ParallelToolCalls
	}
	choice, err := r.toolChoice()
	if err != nil {
		return llm.Request{}, err
	}
	out.ToolChoice = choice
	// Checked with the body (check), so only a valid one is read here.
	if out.ResponseFormat, err = decodeResponseFormat(r.ResponseFormat); err != nil {
		return llm.Request{}, err
	}
	return out, nil
}

func (m CompletionMessage) llmMessage(at string) (llm.Message, error) {
	text, present, err := messageText(m.Content, at+".content")
	if err != nil {
		return llm.Message{}, err
	}
	if !present && m.Role != "assistant" {
		return llm.Message{}, invalidField(at+".content", "required on a %s message", m.Role)
	}
	switch m.Role {
	case "system", "developer":
		return llm.Message{Role: llm.RoleSystem, Content: text}, nil
	case "user":
		// The client's own user text, sanitized as /v1/chat's is (DESIGN
		// §12): controls dropped, injection markers made inert. It is not
		// wrapped and has no 2,000-character bound: the client owns the
		// prompt's shape and the conversation (docs/safety.md).
		clean := safety.Sanitize(text)
		if strings.TrimSpace(clean) == "" {
			return llm.Message{}, invalidField(at+".content", "a user message needs text")
		}
		return llm.Message{Role: llm.RoleUser, Content: clean}, nil
	case "tool":
		if m.ToolCallID == "" {
			return llm.Message{}, invalidField(at+".tool_call_id", "required on a tool message")
		}
		return llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: safeCallID(m.ToolCallID)}, nil
	case "assistant":
		if !present && len(m.ToolCalls) == 0 {
			return llm.Message{}, invalidField(at+".content", "an assistant message needs content or tool_calls")
		}
		out := llm.Message{Role: llm.RoleAssistant, Content: text}
		for j, c := range m.ToolCalls {
			if c.ID == "" || (c.Type != "" && c.Type != "function") || !toolNameRE.MatchString(c.Function.Name) {
				return llm.Message{}, invalidField(fmt.Sprintf("%s.tool_calls[%d]", at, j), "a function call needs an id and a valid name")
			}
			out.ToolCalls = append(out.ToolCalls, llm.ToolCall{
				ID: safeCallID(c.ID), Name: c.Function.Name, Arguments: c.Function.Arguments,
			})
		}
		return out, nil
	}
	return llm.Message{}, invalidField(at+".role", "%q is not one of system, developer, user, assistant, tool", m.Role)
}

// checkToolTurns holds the conversation to the rule every provider
// enforces (OpenAI's words: "messages with role 'tool' must be a response
// to a preceeding message with 'tool_calls'", and such a message "must be
// followed by tool messages responding to each 'tool_call_id'"): the
// tool messages right after an assistant message with calls answer those
// calls, each once, and every call is answered before the next message
// of another role.
func checkToolTurns(msgs []CompletionMessage) error {
	pending := map[string]bool{} // the open calls' ids, as the client sent them
	callsAt := -1
	for i, m := range msgs {
		if m.Role == "tool" {
			if !pending[m.ToolCallID] {
				return invalidField(fmt.Sprintf("messages[%d].tool_call_id", i),
					"%q answers no tool call of the assistant message before it", m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if err := unanswered(callsAt, pending); err != nil {
			return err
		}
		callsAt = -1
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			callsAt = i
			for j, c := range m.ToolCalls {
				if pending[c.ID] {
					return invalidField(fmt.Sprintf("messages[%d].tool_calls[%d].id", i, j), "%q is used twice", c.ID)
				}
				pending[c.ID] = true
			}
		}
	}
	return unanswered(callsAt, pending)
}

func unanswered(at int, pending map[string]bool) error {
	for id := range pending {
		return invalidField(fmt.Sprintf("messages[%d].tool_calls", at),
			"call %q has no tool message answering it; each call is answered right after its message", id)
	}
	return nil
}

// messageText is a message's content as one string: a string, text parts
// joined, or "" and not present for null. Other parts (images, audio,
// files) are refused by name: the router's targets are not all able to
// take them; so is a key a text part does not have.
func messageText(raw json.RawMessage, at string) (text string, present bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true, nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", false, invalidField(at, "a string or an array of text parts")
	}
	var b strings.Builder
	for i, raw := range parts {
		var p contentPart
		if json.Unmarshal(raw, &p) == nil && p.Type != "text" {
			return "", false, invalidField(fmt.Sprintf("%s[%d].type", at, i), "only text parts are supported, got %q", p.Type)
		}
		if err := decodeStrict(raw, &p); err != nil {
			return "", false, invalidField(fmt.Sprintf("%s[%d]", at, i), "a text part is {\"type\": \"text\", \"text\": …}; %v", err)
		}
		b.WriteString(p.Text)
	}
	return b.String(), true, nil
}

// decodeStrict decodes one object of a free-form field into v, refusing
// a key v does not have, as the body's own decoder refuses one at the top
// (httpx.Unmarshal); the body's duplicate keys were refused already.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("unknown field %s", name)
		}
		return errors.New("not that shape")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("not that shape")
	}
	return nil
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

// namedChoice is tool_choice's object form.
type namedChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// toolChoice maps tool_choice: "auto", "none", "required", or
// {"type": "function", "function": {"name": …}}, to llm's form.
func (r *CompletionRequest) toolChoice() (string, error) {
	if len(r.ToolChoice) == 0 || string(r.ToolChoice) == "null" {
		return "", nil
	}
	var mode string
	if json.Unmarshal(r.ToolChoice, &mode) == nil {
		switch mode {
		case "auto", "none", "required":
			if mode != "none" && len(r.Tools) == 0 {
				return "", invalidField("tool_choice", "%q needs tools", mode)
			}
			return mode, nil
		}
		return "", invalidField("tool_choice", "%q is not auto, none or required", mode)
	}
	const shape = "a mode or {\"type\": \"function\", \"function\": {\"name\": …}}"
	var named namedChoice
	if err := decodeStrict(r.ToolChoice, &named); err != nil {
		return "", invalidField("tool_choice", "%s; %v", shape, err)
	}
	if named.Type != "function" {
		return "", invalidField("tool_choice", shape)
	}
	for _, t := range r.Tools {
		if t.Function.Name == named.Function.Name {
			return named.Function.Name, nil
		}
	}
	return "", invalidField("tool_choice", "%q is not among the tools", named.Function.Name)
}
