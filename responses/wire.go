package responses

import (
	"encoding/json"

	"github.com/voxgate/voxgate/llm"
)

// What /v1/responses answers, in the spec's shapes, with every field
// its Response requires present (null where it allows null), so that the
// official clients decode it unchanged; the tests validate each against
// the spec.

// Response is a response object.
type Response struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"` // "response"
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"` // in_progress, completed, failed
	CompletedAt        *int64            `json:"completed_at"`
	Background         bool              `json:"background"`
	Error              *ResponseError    `json:"error"`
	IncompleteDetails  *struct{}         `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"` // the model that answered, not the route
	Output             []OutputItem      `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          reasoningOut      `json:"reasoning"`
	ServiceTier        string            `json:"service_tier"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               textOut           `json:"text"`
	ToolChoice         any               `json:"tool_choice"`
	Tools              []Tool            `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *Usage            `json:"usage,omitempty"`
	User               *string           `json:"user,omitempty"`
	SafetyIdentifier   *string           `json:"safety_identifier,omitempty"`
	Metadata           map[string]string `json:"metadata"`
}

// ResponseError is a failed response's error. Its code is one of the
// spec's ResponseErrorCode; the in-stream error event before it carries
// voxgate's own.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type reasoningOut struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textOut struct {
	Format TextFormat `json:"format"`
}

// Usage is usage in the spec's shape. Cached tokens are part of
// input_tokens, as §10 counts them for every provider; the router
// reports no reasoning tokens apart, so reasoning_tokens is 0.
type Usage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

func newUsage(u llm.Usage) *Usage {
	out := &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	out.InputTokensDetails.CachedTokens = u.CachedInputTokens
	out.InputTokensDetails.CacheWriteTokens = u.CacheWriteInputTokens
	return out
}

// OutputItem is an output message or a function call. Content is a
// message's alone; a call's fields its alone.
type OutputItem struct {
	ID        string        `json:"id"`
	Type      string        `json:"type"` // message, function_call
	Status    string        `json:"status"`
	Role      string        `json:"role,omitempty"`
	Content   *[]OutputText `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
}

// OutputText is a message's output_text part.
type OutputText struct {
	Type        string     `json:"type"` // "output_text"
	Text        string     `json:"text"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
}

func outputText(text string) OutputText {
	return OutputText{Type: "output_text", Text: text, Annotations: []struct{}{}, Logprobs: []struct{}{}}
}

func messageItem(id, status string, parts []OutputText) OutputItem {
	return OutputItem{ID: id, Type: "message", Status: status, Role: "assistant", Content: &parts}
}

func callItem(id, status, callID, name, args string) OutputItem {
	return OutputItem{ID: id, Type: "function_call", Status: status, CallID: callID, Name: name, Arguments: &args}
}

// items are the output as conversation items, for a continuation.
func items(out []OutputItem) []Item {
	var its []Item
	for _, o := range out {
		switch o.Type {
		case "message":
			var text string
			for _, p := range *o.Content {
				text += p.Text
			}
			its = append(its, Item{ID: o.ID, Type: "message", Role: "assistant", Text: text})
		case "function_call":
			its = append(its, Item{ID: o.ID, Type: "function_call", CallID: o.CallID, Name: o.Name, Arguments: *o.Arguments})
		}
	}
	return its
}

// Deleted is DELETE /v1/responses/{id}'s answer.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "response"
	Deleted bool   `json:"deleted"`
}

// event is one stream event's fields beside its type, which the writer
// adds (sse.Writer.Send), and its sequence_number.
type event map[string]any

func mustRaw(v any) json.RawMessage {
	b, _ := json.Marshal(v) // plain structs of strings and numbers cannot fail
	return b
}
