package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// Bounds of a POST /v1/responses body: the conversation may come whole
// from the client, as on /v1/chat/completions.
const (
	MaxBodyBytes = 1 << 20
	maxItems     = 256
	maxTools     = 128
)

// CreateRequest is the part of the spec's CreateResponse the endpoint
// acts on (docs/chat.md, "The Responses endpoint"). Every other field of
// CreateResponse is named here only to be refused by name (refused), and
// a key the spec does not have is refused as unknown, as completions
// does: a client that sets a field expects it to act.
type CreateRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       *string           `json:"instructions"`
	RawTools           []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Reasoning          *Reasoning        `json:"reasoning"`
	Stream             bool              `json:"stream"`
	Store              *bool             `json:"store"`
	Metadata           json.RawMessage   `json:"metadata"`
	User               string            `json:"user"`
	SafetyIdentifier   string            `json:"safety_identifier"`
	PreviousResponseID string            `json:"previous_response_id"`
	Background         *bool             `json:"background"`
	Truncation         *string           `json:"truncation"`
	Text               json.RawMessage   `json:"text"`

	// Tools are the function tools of RawTools, once checked.
	Tools []Tool `json:"-"`
	// Format is Text's format, once checked ({"type": "text"} if unset).
	Format TextFormat `json:"-"`

	// Fields of CreateResponse voxgate does not act on: any value but
	// null is refused by name (refused).
	Temperature          json.RawMessage `json:"temperature"`
	TopP                 json.RawMessage `json:"top_p"`
	TopLogprobs          json.RawMessage `json:"top_logprobs"`
	Include              json.RawMessage `json:"include"`
	Prompt               json.RawMessage `json:"prompt"`
	PromptCacheKey       json.RawMessage `json:"prompt_cache_key"`
	PromptCacheRetention json.RawMessage `json:"prompt_cache_retention"`
	ServiceTier          json.RawMessage `json:"service_tier"`
	MaxToolCalls         json.RawMessage `json:"max_tool_calls"`
	StreamOptions        json.RawMessage `json:"stream_options"`
	Conversation         json.RawMessage `json:"conversation"`
	ContextManagement    json.RawMessage `json:"context_management"`
}

// Reasoning is the request's reasoning: effort alone is acted on.
type Reasoning struct {
	Effort          *string         `json:"effort"`
	Summary         json.RawMessage `json:"summary"`
	GenerateSummary json.RawMessage `json:"generate_summary"`
}

// Tool is one of the client's tools. Only function tools are served:
// voxgate passes them to the model and never runs them.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
}

// builtinTools are the spec's hosted tools: each runs on OpenAI's side,
// which no route of voxgate's is.
var builtinTools = map[string]bool{"web_search": true, "web_search_preview": true, "web_search_2025_08_26": true,
	"web_search_preview_2025_03_11": true, "file_search": true, "code_interpreter": true, "computer_use_preview": true,
	"computer_use": true, "image_generation": true, "mcp": true, "local_shell": true, "shell": true,
	"apply_patch": true, "custom": true}

var (
	// toolNameRE is OpenAI's rule for function names, which the other
	// providers accept too.
	toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	// responseIDRE is the shape of the ids voxgate mints (newResponseID).
	responseIDRE = regexp.MustCompile(`^resp_[a-zA-Z0-9_-]{1,64}$`)
)

// reasoningEfforts are the spec's ReasoningEffort enum.
var reasoningEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true,
	"high": true, "xhigh": true}

// Decode reads and checks a body. Every refusal is an *apierr.Error:
// 400 for what does not parse, breaks the API's shape or asks for what
// voxgate does not do.
func Decode(body []byte) (*CreateRequest, error) {
	var req CreateRequest
	if err := httpx.Unmarshal(body, &req, false); err != nil {
		return nil, err
	}
	if err := req.check(); err != nil {
		return nil, err
	}
	return &req, nil
}

// invalidField is the 400 of a refused field in OpenAI's error shape:
// param names it, the message says why.
func invalidField(param, format string, args ...any) *apierr.Error {
	return apierr.New(apierr.InvalidRequest, param+": "+fmt.Sprintf(format, args...)).
		With("param", param).With("type", "invalid_request_error")
}

func set(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// asked is a list field unless it is an empty list, which asks for
// nothing: the Agents SDK sends include: [] on every request.
func asked(raw json.RawMessage) json.RawMessage {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && len(list) == 0 {
		return nil
	}
	return raw
}

func (r *CreateRequest) check() error {
	if err := r.refused(); err != nil {
		return err
	}
	switch {
	case r.Model == "":
		return invalidField("model", "required (a route name; GET /v1/models lists them)")
	case !set(r.Input) && r.PreviousResponseID == "":
		return invalidField("input", "required")
	case len(r.RawTools) > maxTools:
		return invalidField("tools", "at most %d", maxTools)
	case r.MaxOutputTokens != nil && *r.MaxOutputTokens < 1:
		return invalidField("max_output_tokens", "must be at least 1")
	case r.Reasoning != nil && r.Reasoning.Effort != nil && !reasoningEfforts[*r.Reasoning.Effort]:
		return invalidField("reasoning.effort", "%q is not one of none, minimal, low, medium, high, xhigh", *r.Reasoning.Effort)
	case r.PreviousResponseID != "" && !responseIDRE.MatchString(r.PreviousResponseID):
		return invalidField("previous_response_id", "not a response id")
	}
	if err := checkMetadata(r.Metadata); err != nil {
		return err
	}
	// text.format asks for JSON where the route's targets can give it
	// (docs/chat.md, "The Responses endpoint"); CheckRoute refuses it
	// by name where none can.
	format, err := decodeText(r.Text)
	if err != nil {
		return err
	}
	r.Format = format
	for i, raw := range r.RawTools {
		at := fmt.Sprintf("tools[%d]", i)
		var kind struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(raw, &kind)
		switch {
		case builtinTools[kind.Type]:
			return invalidField(at+".type", "%q is not served by this gateway; only function tools are", kind.Type)
		case kind.Type != "function":
			return invalidField(at+".type", "only \"function\" is supported")
		}
		var t Tool
		if err := decodeStrict(raw, &t); err != nil {
			return invalidField(at, "a function tool is {\"type\": \"function\", \"name\": …, \"parameters\": …}; %v", err)
		}
		r.Tools = append(r.Tools, t)
		switch {
		case !toolNameRE.MatchString(t.Name):
			return invalidField(at+".name", "1 to 64 letters, digits, _ or -")
		}
		if set(t.Parameters) {
			var schema map[string]any
			if json.Unmarshal(t.Parameters, &schema) != nil || schema == nil {
				return invalidField(at+".parameters", "must be a JSON Schema object")
			}
		}
	}
	_, err = r.toolChoice()
	return err
}

// refused names the first field set to something voxgate does not act
// on: it is refused rather than dropped (docs/chat.md).
func (r *CreateRequest) refused() error {
	const notActed = "not acted on by this gateway; leave it out"
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"temperature", r.Temperature}, {"top_p", r.TopP}, {"top_logprobs", r.TopLogprobs}, {"include", asked(r.Include)},
		{"prompt", r.Prompt}, {"prompt_cache_key", r.PromptCacheKey}, {"prompt_cache_retention", r.PromptCacheRetention},
		{"service_tier", r.ServiceTier}, {"max_tool_calls", r.MaxToolCalls}, {"stream_options", r.StreamOptions},
		{"conversation", r.Conversation}, {"context_management", r.ContextManagement}} {
		if set(f.raw) {
			return invalidField(f.name, notActed)
		}
	}
	switch {
	case r.Background != nil && *r.Background:
		return invalidField("background", "background mode is not served by this gateway; send false or leave it out")
	case r.Truncation != nil && *r.Truncation != "disabled":
		return invalidField("truncation", "only \"disabled\" is served")
	case r.Reasoning != nil && (set(r.Reasoning.Summary) || set(r.Reasoning.GenerateSummary)):
		return invalidField("reasoning.summary", "reasoning summaries are not served by this gateway")
	}
	return nil
}

// Metadata's bounds, as the spec's Metadata gives them.
const (
	maxMetadataPairs    = 16
	maxMetadataKeyLen   = 64
	maxMetadataValueLen = 512
)

// checkMetadata holds metadata to the spec's Metadata: null, or an
// object of at most 16 string values, keys up to 64 characters and
// values up to 512. It is kept with a stored response and echoed, never
// sent to a provider.
func checkMetadata(raw json.RawMessage) error {
	const want = "must be an object of at most 16 string values (keys up to 64 characters, values up to 512)"
	if !set(raw) {
		return nil
	}
	var pairs map[string]string
	if json.Unmarshal(raw, &pairs) != nil || pairs == nil {
		return invalidField("metadata", want)
	}
	if len(pairs) > maxMetadataPairs {
		return invalidField("metadata", "%s; got %d", want, len(pairs))
	}
	for k, v := range pairs {
		if utf8.RuneCountInString(k) > maxMetadataKeyLen || utf8.RuneCountInString(v) > maxMetadataValueLen {
			return invalidField("metadata", want)
		}
	}
	return nil
}

// metadata is the request's metadata as a map, never nil (the Response
// has an object there).
func (r *CreateRequest) metadata() map[string]string {
	out := map[string]string{}
	if set(r.Metadata) {
		_ = json.Unmarshal(r.Metadata, &out) // checked by checkMetadata
	}
	return out
}

// toolChoice is tool_choice in llm's form: "", "auto", "none",
// "required" or a function's name ({"type": "function", "name": …}).
func (r *CreateRequest) toolChoice() (string, error) {
	if !set(r.ToolChoice) {
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
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := decodeStrict(r.ToolChoice, &named); err != nil || named.Type != "function" {
		return "", invalidField("tool_choice", "a mode or {\"type\": \"function\", \"name\": …}; hosted tools are not served by this gateway")
	}
	for _, t := range r.Tools {
		if t.Name == named.Name {
			return named.Name, nil
		}
	}
	return "", invalidField("tool_choice", "%q is not among the tools", named.Name)
}

// decodeStrict decodes one object of a free-form field into v, refusing
// a key v does not have, as the body's own decoder refuses one at the
// top. It is completions' rule; completions does not export it.
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
