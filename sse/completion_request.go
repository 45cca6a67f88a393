package sse

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/safety"
)

// Bounds of a POST /v1/chat/completions body. The endpoint carries whole
// conversations the client keeps, so it allows more than POST /v1/chat's
// one message; the provider's own context limit still applies.
const (
	MaxCompletionBodyBytes = 1 << 20
	maxCompletionMessages  = 256
	maxCompletionTools     = 128
)

// CompletionRequest is the part of OpenAI's Chat Completions request the
// endpoint takes (docs/chat.md, "OpenAI-compatible endpoint"). A field it
// does not know is refused by name rather than dropped: a client that
// sets it expects it to act. User and Metadata are accepted and never
// forwarded: providers get no user data (DESIGN §11).
type CompletionRequest struct {
	Model               string              `json:"model"`
	Messages            []CompletionMessage `json:"messages"`
	Stream              bool                `json:"stream"`
	StreamOptions       *StreamOptions      `json:"stream_options"`
	Tools               []CompletionTool    `json:"tools"`
	ToolChoice          json.RawMessage     `json:"tool_choice"`
	ParallelToolCalls   *bool               `json:"parallel_tool_calls"`
	MaxTokens           *int                `json:"max_tokens"`
	MaxCompletionTokens *int                `json:"max_completion_tokens"`
	ReasoningEffort     string              `json:"reasoning_effort"`
	N                   *int                `json:"n"`
	User                string              `json:"user"`
	SafetyIdentifier    string              `json:"safety_identifier"`
	Metadata            map[string]string   `json:"metadata"`
	Store               *bool               `json:"store"`
}

// StreamOptions is stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// CompletionMessage is one message of the client's conversation. Content
// is a string, an array of text parts, or null (an assistant message that
// only calls tools).
type CompletionMessage struct {
	Role       string               `json:"role"`
	Content    json.RawMessage      `json:"content"`
	Name       string               `json:"name,omitempty"`
	ToolCalls  []CompletionToolCall `json:"tool_calls,omitempty"`
	ToolCallID string               `json:"tool_call_id,omitempty"`
	Refusal    *string              `json:"refusal"`
}

// CompletionToolCall is a tool call in a message or a response.
type CompletionToolCall struct {
	Index    *int             `json:"index,omitempty"` // only in stream chunks
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function CompletionCalled `json:"function"`
}

// CompletionCalled is a tool call's function.
type CompletionCalled struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// CompletionTool is one of the client's tools. voxgate passes it to the
// model and never runs it: the client does.
type CompletionTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolNameRE is OpenAI's rule for function names, which the other
// providers accept too.
var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// callIDRE is an id every provider takes back (see llm.NewCallID).
var callIDRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,40}$`)

// DecodeCompletionRequest reads and checks a body. Every refusal is an
// *apierr.Error: 400 for what does not parse or breaks the API's shape,
// 413 past MaxCompletionBodyBytes is the caller's (httpx.ReadBody).
func DecodeCompletionRequest(body []byte) (*CompletionRequest, error) {
	var req CompletionRequest
	if err := httpx.Unmarshal(body, &req, false); err != nil {
		return nil, err
	}
	if err := req.check(); err != nil {
		return nil, apierr.New(apierr.InvalidRequest, err.Error())
	}
	return &req, nil
}

func (r *CompletionRequest) check() error {
	switch {
	case r.Model == "":
		return fmt.Errorf("model: required (a route name; GET /v1/models lists them)")
	case len(r.Messages) == 0:
		return fmt.Errorf("messages: at least one is required")
	case len(r.Messages) > maxCompletionMessages:
		return fmt.Errorf("messages: at most %d", maxCompletionMessages)
	case len(r.Tools) > maxCompletionTools:
		return fmt.Errorf("tools: at most %d", maxCompletionTools)
	case r.N != nil && *r.N != 1:
		return fmt.Errorf("n: only 1 is supported")
	case r.StreamOptions != nil && !r.Stream:
		return fmt.Errorf("stream_options: only allowed with stream: true")
	case r.MaxTokens != nil && *r.MaxTokens < 1, r.MaxCompletionTokens != nil && *r.MaxCompletionTokens < 1:
		return fmt.Errorf("max_completion_tokens: must be at least 1")
	}
	for i, t := range r.Tools {
		if t.Type != "function" {
			return fmt.Errorf("tools[%d].type: only \"function\" is supported", i)
		}
		if !toolNameRE.MatchString(t.Function.Name) {
			return fmt.Errorf("tools[%d].function.name: 1 to 64 letters, digits, _ or -", i)
		}
		if len(t.Function.Parameters) > 0 {
			var schema map[string]any
			if json.Unmarshal(t.Function.Parameters, &schema) != nil || schema == nil {
				return fmt.Errorf("tools[%d].function.parameters: must be a JSON Schema object", i)
			}
		}
	}
	return nil
}

// LLMRequest is the request the router gets. Client tool-call ids that a
// provider might refuse (too long, other characters) are replaced by safe
// ones, the same in the assistant's call and the tool's answer, so any
// route target takes the history.
func (r *CompletionRequest) LLMRequest() (llm.Request, error) {
	out := llm.Request{Model: r.Model, ReasoningEffort: r.ReasoningEffort}
	switch {
	case r.MaxCompletionTokens != nil:
		out.MaxOutputTokens = *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		out.MaxOutputTokens = *r.MaxTokens
	}
	for i, m := range r.Messages {
		msg, err := m.llmMessage()
		if err != nil {
			return llm.Request{}, apierr.New(apierr.InvalidRequest, fmt.Sprintf("messages[%d]: %v", i, err))
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, llm.ToolSpec{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters,
		})
	}
	choice, err := r.toolChoice()
	if err != nil {
		return llm.Request{}, apierr.New(apierr.InvalidRequest, "tool_choice: "+err.Error())
	}
	out.ToolChoice = choice
	return out, nil
}

func (m CompletionMessage) llmMessage() (llm.Message, error) {
	text, err := messageText(m.Content)
	if err != nil {
		return llm.Message{}, err
	}
	switch m.Role {
	case "system", "developer":
		return llm.Message{Role: llm.RoleSystem, Content: text}, nil
	case "user":
		// The client's own user text, sanitized as /v1/chat's is (DESIGN
		// §12): controls dropped, injection markers made inert. It is not
		// wrapped and has no 2,000-character bound: the client owns the
		// prompt's shape and the conversation (docs/safety.md).
		return llm.Message{Role: llm.RoleUser, Content: safety.Sanitize(text)}, nil
	case "tool":
		if m.ToolCallID == "" {
			return llm.Message{}, fmt.Errorf("tool_call_id: required on a tool message")
		}
		return llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: safeCallID(m.ToolCallID)}, nil
	case "assistant":
		out := llm.Message{Role: llm.RoleAssistant, Content: text}
		for j, c := range m.ToolCalls {
			if c.ID == "" || (c.Type != "" && c.Type != "function") || !toolNameRE.MatchString(c.Function.Name) {
				return llm.Message{}, fmt.Errorf("tool_calls[%d]: a function call needs an id and a valid name", j)
			}
			out.ToolCalls = append(out.ToolCalls, llm.ToolCall{
				ID: safeCallID(c.ID), Name: c.Function.Name, Arguments: c.Function.Arguments,
			})
		}
		return out, nil
	}
	return llm.Message{}, fmt.Errorf("role: %q is not one of system, developer, user, assistant, tool", m.Role)
}

// messageText is a message's content as one string: a string, text parts
// joined, or "" for null. Other parts (images, audio, files) are refused
// by name: the router's targets are not all able to take them.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content: a string or an array of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content[%d].type: only text parts are supported, got %q", i, p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
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
				return "", fmt.Errorf("%q needs tools", mode)
			}
			return mode, nil
		}
		return "", fmt.Errorf("%q is not auto, none or required", mode)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(r.ToolChoice, &named); err != nil || named.Type != "function" {
		return "", fmt.Errorf("a mode or {\"type\": \"function\", \"function\": {\"name\": …}}")
	}
	for _, t := range r.Tools {
		if t.Function.Name == named.Function.Name {
			return named.Function.Name, nil
		}
	}
	return "", fmt.Errorf("%q is not among the tools", named.Function.Name)
}
