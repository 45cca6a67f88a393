package completions

import (
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
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
// forwarded: providers get no user data (DESIGN §11). Store is taken only
// as false, which is what voxgate does: it never asks a provider to keep
// a conversation.
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
	Metadata            json.RawMessage     `json:"metadata"` // checked by checkMetadata
	Store               *bool               `json:"store"`
	// ResponseFormat is checked and read by decodeResponseFormat
	// (format.go), which names the member at fault.
	ResponseFormat json.RawMessage `json:"response_format"`
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
		return nil, err
	}
	return &req, nil
}

// invalidField is the 400 of a refused field in OpenAI's error shape:
// param names it (as OpenAI's clients show it), the message says why.
func invalidField(param, format string, args ...any) *apierr.Error {
	return apierr.New(apierr.InvalidRequest, param+": "+fmt.Sprintf(format, args...)).
		With("param", param).With("type", "invalid_request_error")
}

// reasoningEfforts are the spec's ReasoningEffort enum
// (../shared/reference/openai-openapi.yml); a model may refuse some of
// them, which its provider says.
var reasoningEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true,
	"high": true, "xhigh": true, "max": true}

func (r *CompletionRequest) check() error {
	switch {
	case r.Model == "":
		return invalidField("model", "required (a route name; GET /v1/models lists them)")
	case len(r.Messages) == 0:
		return invalidField("messages", "at least one is required")
	case len(r.Messages) > maxCompletionMessages:
		return invalidField("messages", "at most %d", maxCompletionMessages)
	case len(r.Tools) > maxCompletionTools:
		return invalidField("tools", "at most %d", maxCompletionTools)
	case r.N != nil && *r.N != 1:
		return invalidField("n", "only 1 is supported")
	case r.StreamOptions != nil && !r.Stream:
		return invalidField("stream_options", "only allowed with stream: true")
	case r.MaxTokens != nil && *r.MaxTokens < 1:
		return invalidField("max_tokens", "must be at least 1")
	case r.MaxCompletionTokens != nil && *r.MaxCompletionTokens < 1:
		return invalidField("max_completion_tokens", "must be at least 1")
	case r.ReasoningEffort != "" && !reasoningEfforts[r.ReasoningEffort]:
		return invalidField("reasoning_effort", "%q is not one of none, minimal, low, medium, high, xhigh, max", r.ReasoningEffort)
	case r.Store != nil && *r.Store:
		return invalidField("store", "voxgate never asks a provider to store a conversation; leave it out or send false")
	}
	if err := checkMetadata(r.Metadata); err != nil {
		return err
	}
	if _, err := decodeResponseFormat(r.ResponseFormat); err != nil {
		return err
	}
	for i, t := range r.Tools {
		if t.Type != "function" {
			return invalidField(fmt.Sprintf("tools[%d].type", i), "only \"function\" is supported")
		}
		if !toolNameRE.MatchString(t.Function.Name) {
			return invalidField(fmt.Sprintf("tools[%d].function.name", i), "1 to 64 letters, digits, _ or -")
		}
		if len(t.Function.Parameters) > 0 {
			var schema map[string]any
			if json.Unmarshal(t.Function.Parameters, &schema) != nil || schema == nil {
				return invalidField(fmt.Sprintf("tools[%d].function.parameters", i), "must be a JSON Schema object")
			}
		}
	}
	return nil
}

// Metadata's bounds, as the spec's Metadata gives them.
const (
	maxMetadataPairs    = 16
	maxMetadataKeyLen   = 64
	maxMetadataValueLen = 512
)

// checkMetadata holds metadata to the spec's Metadata: null, or an object
// of at most 16 string values, keys up to 64 characters and values up to
// 512. It is never forwarded; the bounds still say what a client may send.
func checkMetadata(raw json.RawMessage) error {
	const want = "must be an object of at most 16 string values (keys up to 64 characters, values up to 512)"
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var pairs map[string]json.RawMessage
	if json.Unmarshal(raw, &pairs) != nil || pairs == nil {
		return invalidField("metadata", want)
	}
	if len(pairs) > maxMetadataPairs {
		return invalidField("metadata", "%s; got %d", want, len(pairs))
	}
	for k, v := range pairs {
		var value string
		switch {
		case utf8.RuneCountInString(k) > maxMetadataKeyLen:
			return invalidField("metadata", "%s; a key has %d characters", want, utf8.RuneCountInString(k))
		case json.Unmarshal(v, &value) != nil:
			return invalidField("metadata."+k, want)
		case utf8.RuneCountInString(value) > maxMetadataValueLen:
			return invalidField("metadata."+k, "%s; this value has %d characters", want, utf8.RuneCountInString(value))
		}
	}
	return nil
}
