package responses

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// createParams are the properties of the spec's CreateResponse. The real
// API refuses any other top-level name with unknown_parameter, as it does
// on Chat Completions; TestCreateParamsMatchSpec keeps the list in step.
var createParams = map[string]bool{
	"background": true, "context_management": true, "conversation": true, "include": true, "input": true,
	"instructions": true, "max_output_tokens": true, "max_tool_calls": true, "metadata": true, "model": true,
	"moderation": true, "parallel_tool_calls": true, "previous_response_id": true, "prompt": true,
	"prompt_cache_key": true, "prompt_cache_options": true, "prompt_cache_retention": true, "reasoning": true,
	"safety_identifier": true, "service_tier": true, "store": true, "stream": true, "stream_options": true,
	"temperature": true, "text": true, "tool_choice": true, "tools": true, "top_logprobs": true, "top_p": true,
	"truncation": true, "user": true,
}

// builtinTools are the spec's Tool types other than function: the real API
// serves them, the simulator does not, so it refuses them by name.
var builtinTools = []string{"apply_patch", "code_interpreter", "computer", "computer_use_preview", "custom",
	"file_search", "image_generation", "local_shell", "mcp", "namespace", "programmatic_tool_calling", "shell",
	"tool_search", "web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"}

// minOutputTokens is the floor the API puts on max_output_tokens.
const minOutputTokens = 16

type createRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       *string           `json:"instructions"`
	Tools              []tool            `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Reasoning          *reasoningParam   `json:"reasoning"`
	Text               *textParam        `json:"text"`
	Store              *bool             `json:"store"`
	Stream             *bool             `json:"stream"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Metadata           map[string]string `json:"metadata"`
	User               *string           `json:"user"`
	SafetyIdentifier   *string           `json:"safety_identifier"`
	PromptCacheKey     *string           `json:"prompt_cache_key"`
	Background         *bool             `json:"background"`
	Conversation       json.RawMessage   `json:"conversation"`
	Prompt             json.RawMessage   `json:"prompt"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	Include            []string          `json:"include"`

	items  []item            // input, parsed
	choice openai.ToolChoice // tool_choice, parsed
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

type reasoningParam struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textParam struct {
	Format *textFormat `json:"format"`
}

type textFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// item is one conversation item, input or output, as the simulator keeps
// it: a message (role and text), a function_call, its function_call_output,
// or a reasoning item (kept, so a continuation carries it, and otherwise
// not read).
type item struct {
	ID        string `json:"id,omitempty"`
	Type      string `json:"type"`
	Role      string `json:"role,omitempty"`
	Text      string `json:"-"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Output    string `json:"-"`
	// Encrypted is a reasoning item's encrypted_content: sealed for the
	// client on output, checked on input (reasoning.go).
	Encrypted string `json:"-"`
}

func (r *createRequest) stream() bool { return r.Stream != nil && *r.Stream }
func (r *createRequest) store() bool  { return r.Store == nil || *r.Store }
func (r *createRequest) effort() string {
	if r.Reasoning != nil && r.Reasoning.Effort != nil {
		return *r.Reasoning.Effort
	}
	return ""
}

// decodeCreate parses and checks a request body, returning an *APIError
// shaped like the real API's for anything it would refuse.
func decodeCreate(body []byte) (*createRequest, error) {
	if err := checkParams(body); err != nil {
		return nil, err
	}
	var req createRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, core.JSONError(err, "")
	}
	if req.Model == "" {
		return nil, core.ErrMissingParam("model")
	}
	if err := req.checkUnserved(); err != nil {
		return nil, err
	}
	items, err := decodeInput(req.Input)
	if err != nil {
		return nil, err
	}
	req.items = items
	if err := req.checkTools(); err != nil {
		return nil, err
	}
	if m := req.MaxOutputTokens; m != nil && *m < minOutputTokens {
		return nil, core.ErrInvalidValue("max_output_tokens", fmt.Sprintf("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= %d, but got %d instead.", minOutputTokens, *m))
	}
	if e := req.effort(); e != "" && !slices.Contains([]string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}, e) {
		return nil, core.ErrInvalidValue("reasoning.effort", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'.", e))
	}
	if f := req.format(); f != nil {
		switch f.Type {
		case "text", "json_object":
		case "json_schema":
			if f.Name == "" {
				return nil, core.ErrMissingParam("text.format.name")
			}
			if len(f.Schema) == 0 || f.Schema[0] != '{' {
				return nil, core.ErrMissingParam("text.format.schema")
			}
			if f.Strict != nil && *f.Strict {
				if err := core.CheckStrictSchema("text.format.schema", f.Name, f.Schema); err != nil {
					err.(*core.APIError).Code = "invalid_json_schema"
					return nil, err
				}
			}
		default:
			return nil, core.ErrInvalidValue("text.format.type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'text', 'json_schema', and 'json_object'.", f.Type))
		}
	}
	return &req, nil
}

func (r *createRequest) format() *textFormat {
	if r.Text == nil {
		return nil
	}
	return r.Text.Format
}

// checkUnserved refuses by name what the real API serves and the
// simulator does not: background mode, conversations and stored prompts
// (docs/sim.md, "Responses API").
func (r *createRequest) checkUnserved() error {
	switch {
	case r.Background != nil && *r.Background:
		return core.ErrUnsupportedParam("background", "The simulator does not serve background mode: 'background' must be false.")
	case len(r.Conversation) > 0 && string(r.Conversation) != "null":
		return core.ErrUnsupportedParam("conversation", "The simulator does not serve conversations: use 'previous_response_id'.")
	case len(r.Prompt) > 0 && string(r.Prompt) != "null":
		return core.ErrUnsupportedParam("prompt", "The simulator does not serve stored prompts.")
	case r.Conversation != nil && r.PreviousResponseID != nil:
		return core.ErrInvalidRequest("previous_response_id", "Cannot use both 'previous_response_id' and 'conversation'.")
	}
	return nil
}

func checkParams(body []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return core.JSONError(err, "")
	}
	var unknown []string
	for name := range members {
		if !createParams[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return core.ErrUnknownParams(unknown)
}

func (r *createRequest) checkTools() error {
	for i, t := range r.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		switch {
		case slices.Contains(builtinTools, t.Type):
			return core.ErrUnsupportedParam(p+".type", fmt.Sprintf("The simulator does not serve the built-in tool '%s': only 'function' tools.", t.Type))
		case t.Type != "function":
			return core.ErrInvalidValue(p+".type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function', %s.", t.Type, quoteAll(builtinTools)))
		case t.Name == "":
			return core.ErrMissingParam(p + ".name")
		case !openai.ToolNamePattern.MatchString(t.Name):
			return core.ErrInvalidValue(p+".name", fmt.Sprintf("Invalid '%s.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", p))
		case len(t.Parameters) > 0 && string(t.Parameters) != "null" && t.Parameters[0] != '{':
			return core.ErrInvalidType(p+".parameters", "an object", core.JSONKind(t.Parameters))
		}
	}
	choice, err := parseToolChoice(r.ToolChoice)
	if err != nil {
		return err
	}
	switch {
	case choice.Mode == "":
		choice.Mode = "auto"
		if len(r.Tools) == 0 {
			choice.Mode = "none"
		}
	case choice.Mode == "function" && !slices.ContainsFunc(r.Tools, func(t tool) bool { return t.Name == choice.Name }):
		return core.ErrInvalidValue("tool_choice", fmt.Sprintf("Tool choice '%s' not found in 'tools' parameter.", choice.Name))
	case len(r.Tools) == 0 && choice.Mode == "required":
		return core.ErrInvalidValue("tool_choice", "Tool choice 'required' must be specified with 'tools' parameter.")
	}
	r.choice = choice
	return nil
}

// parseToolChoice reads the Responses tool_choice: "none", "auto",
// "required", or {"type":"function","name":...} (flat, not Chat's nested
// function object).
func parseToolChoice(raw json.RawMessage) (openai.ToolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return openai.ToolChoice{}, nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "none", "auto", "required":
			return openai.ToolChoice{Mode: mode}, nil
		}
		return openai.ToolChoice{}, core.ErrInvalidValue("tool_choice", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", mode))
	}
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return openai.ToolChoice{}, core.JSONError(err, "tool_choice")
	}
	if named.Type != "function" {
		return openai.ToolChoice{}, core.ErrInvalidValue("tool_choice.type", fmt.Sprintf("Invalid value: '%s'. The simulator supports only 'function' tool choices.", named.Type))
	}
	if named.Name == "" {
		return openai.ToolChoice{}, core.ErrMissingParam("tool_choice.name")
	}
	return openai.ToolChoice{Mode: "function", Name: named.Name}, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}
