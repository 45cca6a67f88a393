package responses

import (
	"encoding/json"
)

// Wire types for what the simulator sends, with the fields the spec's
// Response requires present (null where it allows null), checked against
// the spec in tests.

type response struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	CompletedAt        *int64            `json:"completed_at"`
	Background         bool              `json:"background"`
	Error              *responseError    `json:"error"`
	IncompleteDetails  *incomplete       `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []json.RawMessage `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          reasoningOut      `json:"reasoning"`
	ServiceTier        string            `json:"service_tier"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               textOut           `json:"text"`
	ToolChoice         any               `json:"tool_choice"`
	Tools              []toolOut         `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *usage            `json:"usage,omitempty"`
	User               *string           `json:"user,omitempty"`
	SafetyIdentifier   *string           `json:"safety_identifier,omitempty"`
	PromptCacheKey     *string           `json:"prompt_cache_key,omitempty"`
	Metadata           map[string]string `json:"metadata"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incomplete struct {
	Reason string `json:"reason"`
}

type reasoningOut struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textOut struct {
	Format textFormat `json:"format"`
}

type toolOut struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type usage struct {
	InputTokens         int           `json:"input_tokens"`
	InputTokensDetails  inputDetails  `json:"input_tokens_details"`
	OutputTokens        int           `json:"output_tokens"`
	OutputTokensDetails outputDetails `json:"output_tokens_details"`
	TotalTokens         int           `json:"total_tokens"`
}

type inputDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

type outputDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// Output items. Each kind is its own type, so a required empty list
// (content, summary) is sent as [] rather than left out.

type messageOut struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string     `json:"type"`
	Text        string     `json:"text"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
}

type functionCallOut struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type reasoningItemOut struct {
	ID               string     `json:"id"`
	Type             string     `json:"type"`
	Summary          []struct{} `json:"summary"`
	EncryptedContent *string    `json:"encrypted_content,omitempty"`
}

// Input items as GET /v1/responses/{id}/input_items lists them.

type inputMessageOut struct {
	ID      string      `json:"id"`
	Type    string      `json:"type"`
	Status  string      `json:"status"`
	Role    string      `json:"role"`
	Content []inputText `json:"content"`
}

type inputText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type functionCallOutputOut struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type itemList struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
	FirstID *string           `json:"first_id"`
	LastID  *string           `json:"last_id"`
}

type deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // plain structs of strings and ints cannot fail
	return b
}

// render is an item as the API shows it: an input message as a message
// with input_text content, an assistant message with output_text, a
// function call or its output with status completed.
func (it item) render(status string) json.RawMessage {
	switch it.Type {
	case "message":
		if it.Role == "assistant" {
			return mustJSON(messageOut{ID: it.ID, Type: "message", Status: status, Role: "assistant",
				Content: []outputText{{Type: "output_text", Text: it.Text, Annotations: []struct{}{}, Logprobs: []struct{}{}}}})
		}
		return mustJSON(inputMessageOut{ID: it.ID, Type: "message", Status: status, Role: it.Role,
			Content: []inputText{{Type: "input_text", Text: it.Text}}})
	case "function_call":
		return mustJSON(functionCallOut{ID: it.ID, Type: "function_call", Status: status, CallID: it.CallID, Name: it.Name, Arguments: it.Arguments})
	case "function_call_output":
		return mustJSON(functionCallOutputOut{ID: it.ID, Type: "function_call_output", Status: status, CallID: it.CallID, Output: it.Output})
	default: // reasoning
		r := reasoningItemOut{ID: it.ID, Type: "reasoning", Summary: []struct{}{}}
		if it.Encrypted != "" {
			r.EncryptedContent = &it.Encrypted
		}
		return mustJSON(r)
	}
}
