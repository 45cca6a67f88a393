package openai

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
)

// ChatRequest is the part of CreateChatCompletionRequest the simulator acts
// on. The spec's other parameters are accepted and ignored; names the spec
// does not list are refused (see chatParams).
type ChatRequest struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Stream              *bool             `json:"stream"`
	StreamOptions       *streamOptions    `json:"stream_options"`
	Tools               []ChatTool        `json:"tools"`
	ToolChoice          json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	N                   *int              `json:"n"`
	ReasoningEffort     *string           `json:"reasoning_effort"`
	// PromptCacheOptions sets how long the prompt's cache writes live
	// (promptcachettl.go); ServiceTier the processing the request asks for
	// (servicetier.go).
	PromptCacheOptions *PromptCacheOptions `json:"prompt_cache_options"`
	ServiceTier        *string             `json:"service_tier"`
	// ResponseFormat asks for JSON, of a schema or any (format.go).
	ResponseFormat json.RawMessage `json:"response_format"`

	// Derived by decodeChatRequest, never read from the body.
	Msgs   []ChatMessage `json:"-"`
	Choice ToolChoice    `json:"-"`
	// Format is ResponseFormat parsed, nil when absent.
	Format *ResponseFormat `json:"-"`
}

type streamOptions struct {
	IncludeUsage       bool  `json:"include_usage"`
	IncludeObfuscation *bool `json:"include_obfuscation"`
}

type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []MsgToolCall   `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`

	// Text is the text of Content, whether a string or text parts,
	// never read from the body.
	Text string `json:"-"`
}

type MsgToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type ChatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		// Strict is taken (FunctionObject.strict, a boolean or null) and
		// typed, so a gateway that forwards another type fails here as it
		// would on the API; the simulator's scripted calls match their
		// schema either way.
		Strict *bool `json:"strict"`
	} `json:"function"`
}

type ContentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToolChoice is the parsed tool_choice: mode is none, auto or required, or
// "function" with name set.
type ToolChoice struct {
	Mode string
	Name string
}

func (r *ChatRequest) stream() bool { return r.Stream != nil && *r.Stream }

func (r *ChatRequest) includeUsage() bool {
	return r.stream() && r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// obfuscate reports whether chunks carry the obfuscation padding: by
// default, unless stream_options.include_obfuscation is false.
func (r *ChatRequest) obfuscate() bool {
	o := r.StreamOptions
	return o == nil || o.IncludeObfuscation == nil || *o.IncludeObfuscation
}

// maxCompletion returns the completion token limit, or 0 for none.
func (r *ChatRequest) maxCompletion() int {
	if r.MaxCompletionTokens != nil {
		return *r.MaxCompletionTokens
	}
	if r.MaxTokens != nil {
		return *r.MaxTokens
	}
	return 0
}

func (r *ChatRequest) parallelCalls() bool { return r.ParallelToolCalls == nil || *r.ParallelToolCalls }

var ToolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// decodeChatRequest parses and checks a request body, returning an *APIError
// shaped like the real API's for anything it would refuse.
func decodeChatRequest(body []byte) (*ChatRequest, error) {
	if err := checkParams(body); err != nil {
		return nil, err
	}
	var req ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, core.JSONError(err, "")
	}
	if req.Model == "" {
		return nil, core.ErrInvalidRequest("model", "you must provide a model parameter")
	}
	if req.Messages == nil {
		return nil, core.ErrMissingParam("messages")
	}
	if len(req.Messages) == 0 {
		return nil, &core.APIError{Status: 400, Type: "invalid_request_error", Param: "messages", Code: "empty_array",
			Message: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."}
	}
	req.Msgs = make([]ChatMessage, len(req.Messages))
	for i, raw := range req.Messages {
		if err := decodeMessage(raw, i, &req.Msgs[i]); err != nil {
			return nil, err
		}
	}
	if err := checkToolSequence(req.Msgs); err != nil {
		return nil, err
	}
	if err := checkTools(&req); err != nil {
		return nil, err
	}
	if err := checkLimits(&req); err != nil {
		return nil, err
	}
	if err := req.PromptCacheOptions.check(); err != nil {
		return nil, err
	}
	if err := checkServiceTier(req.ServiceTier); err != nil {
		return nil, err
	}
	format, err := decodeResponseFormat(req.ResponseFormat, req.Msgs)
	if err != nil {
		return nil, err
	}
	req.Format = format
	return &req, nil
}

func validRole(role string) bool {
	switch role {
	case "system", "developer", "user", "assistant", "tool", "function":
		return true
	}
	return false
}

func decodeMessage(raw json.RawMessage, i int, m *ChatMessage) error {
	prefix := fmt.Sprintf("messages[%d]", i)
	if err := json.Unmarshal(raw, m); err != nil {
		return core.JSONError(err, prefix)
	}
	switch {
	case m.Role == "":
		return core.ErrMissingParam(prefix + ".role")
	case !validRole(m.Role):
		return core.ErrInvalidValue(prefix+".role", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role))
	}
	text, present, err := contentText(m.Content, prefix+".content")
	if err != nil {
		return err
	}
	m.Text = text
	switch {
	case m.Role == "assistant" && !present && len(m.ToolCalls) == 0:
		return core.ErrMissingParam(prefix + ".content")
	case m.Role != "assistant" && !present:
		return core.ErrMissingParam(prefix + ".content")
	case m.Role == "tool" && m.ToolCallID == "":
		return core.ErrMissingParam(prefix + ".tool_call_id")
	}
	for j, tc := range m.ToolCalls {
		if tc.ID == "" {
			return core.ErrMissingParam(fmt.Sprintf("%s.tool_calls[%d].id", prefix, j))
		}
		if tc.Function.Name == "" {
			return core.ErrMissingParam(fmt.Sprintf("%s.tool_calls[%d].function.name", prefix, j))
		}
	}
	return nil
}

// contentText returns the text of a message's content, which is a string, an
// array of parts (only text parts carry text), or null / absent.
func contentText(raw json.RawMessage, param string) (text string, present bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", false, core.ErrInvalidJSON()
		}
		return text, true, nil
	case '[':
		var parts []ContentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", false, core.JSONError(err, param)
		}
		if len(parts) == 0 {
			return "", false, &core.APIError{Status: 400, Type: "invalid_request_error", Param: param, Code: "empty_array",
				Message: fmt.Sprintf("Invalid '%s': empty array. Expected an array with minimum length 1, but got an empty array instead.", param)}
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), true, nil
	}
	return "", false, core.ErrInvalidType(param, "one of a string or array of objects", core.JSONKind(raw))
}

// checkToolSequence enforces the real API's pairing of assistant tool_calls
// with tool messages, so a gateway that gets the loop wrong fails here as it
// would in production.
func checkToolSequence(msgs []ChatMessage) error {
	pending := map[string]bool{}
	pendingAt := -1
	for i, m := range msgs {
		if m.Role == "tool" {
			if pendingAt < 0 || !pending[m.ToolCallID] {
				return core.ErrInvalidRequest(fmt.Sprintf("messages.[%d].role", i),
					"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			return unansweredCalls(pendingAt, pending)
		}
		pendingAt = -1
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			pendingAt = i
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
			}
		}
	}
	if len(pending) > 0 {
		return unansweredCalls(pendingAt, pending)
	}
	return nil
}

func unansweredCalls(at int, pending map[string]bool) error {
	ids := make([]string, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	return core.ErrInvalidRequest(fmt.Sprintf("messages.[%d].role", at),
		"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "+strings.Join(ids, ", "))
}

func checkTools(req *ChatRequest) error {
	for i, t := range req.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return core.ErrInvalidValue(p+".type", fmt.Sprintf("Invalid value: '%s'. The simulator supports only 'function' tools.", t.Type))
		}
		if t.Function.Name == "" {
			return core.ErrMissingParam(p + ".function.name")
		}
		if !ToolNamePattern.MatchString(t.Function.Name) {
			return core.ErrInvalidValue(p+".function.name", fmt.Sprintf("Invalid '%s.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", p))
		}
		if ps := t.Function.Parameters; len(ps) > 0 && string(ps) != "null" && ps[0] != '{' {
			return core.ErrInvalidType(p+".function.parameters", "an object", core.JSONKind(ps))
		}
	}
	choice, err := ParseToolChoice(req.ToolChoice)
	if err != nil {
		return err
	}
	if choice.Mode == "" {
		choice.Mode = "auto"
		if len(req.Tools) == 0 {
			choice.Mode = "none"
		}
	} else if len(req.Tools) == 0 && choice.Mode != "none" {
		return core.ErrInvalidValue("tool_choice", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
	}
	if choice.Mode == "function" && req.Tool(choice.Name) == nil {
		return core.ErrInvalidValue("tool_choice", fmt.Sprintf("Invalid value for 'tool_choice': function '%s' was not found in 'tools'.", choice.Name))
	}
	req.Choice = choice
	return nil
}

func ParseToolChoice(raw json.RawMessage) (ToolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return ToolChoice{}, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "none", "auto", "required":
			return ToolChoice{Mode: mode}, nil
		}
		return ToolChoice{}, core.ErrInvalidValue("tool_choice", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", mode))
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return ToolChoice{}, core.JSONError(err, "tool_choice")
	}
	if named.Type != "function" {
		return ToolChoice{}, core.ErrInvalidValue("tool_choice.type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function'.", named.Type))
	}
	if named.Function.Name == "" {
		return ToolChoice{}, core.ErrMissingParam("tool_choice.function.name")
	}
	return ToolChoice{Mode: "function", Name: named.Function.Name}, nil
}

func checkLimits(req *ChatRequest) error {
	if req.N != nil && *req.N != 1 {
		return core.ErrInvalidValue("n", fmt.Sprintf("Invalid value for 'n': %d. The simulator supports only n=1.", *req.N))
	}
	limits := []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}}
	for _, l := range limits {
		if name, v := l.name, l.v; v != nil && *v < 1 {
			return core.ErrInvalidValue(name, fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", name, *v))
		}
	}
	if e := req.ReasoningEffort; e != nil && !reasoningEfforts[*e] {
		return core.ErrInvalidValue("reasoning_effort", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'.", *e))
	}
	if req.StreamOptions != nil && !req.stream() {
		return core.ErrInvalidRequest("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	return nil
}

// reasoningEfforts are the spec's ReasoningEffort enum: the API refuses
// any other value (a model may refuse some of these too; see chatconfig).
var reasoningEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true,
	"high": true, "xhigh": true, "max": true}

func (r *ChatRequest) Tool(name string) *ChatTool {
	for i := range r.Tools {
		if r.Tools[i].Function.Name == name {
			return &r.Tools[i]
		}
	}
	return nil
}
