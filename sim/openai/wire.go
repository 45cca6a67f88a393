package openai

import "encoding/json"

// Wire types for what the simulator sends. Field presence and nullability
// follow what the real API sends (checked against the spec in tests): for
// example content is null, not absent, in a tool-call message, and every
// stream choice carries "finish_reason": null until the last one.

type completionBody struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	Choices           []completionChoice `json:"choices"`
	Usage             *usageBody         `json:"usage"`
	ServiceTier       string             `json:"service_tier"`
	SystemFingerprint string             `json:"system_fingerprint"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	Logprobs     *struct{}       `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type responseMessage struct {
	Role        string         `json:"role"`
	Content     *string        `json:"content"`
	Refusal     *string        `json:"refusal"`
	ToolCalls   []wireToolCall `json:"tool_calls,omitempty"`
	Annotations []struct{}     `json:"annotations"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type usageBody struct {
	PromptTokens            int                   `json:"prompt_tokens"`
	CompletionTokens        int                   `json:"completion_tokens"`
	TotalTokens             int                   `json:"total_tokens"`
	PromptTokensDetails     promptTokenDetails    `json:"prompt_tokens_details"`
	CompletionTokensDetails completionTokenDetail `json:"completion_tokens_details"`
}

type promptTokenDetails struct {
	CachedTokens int `json:"cached_tokens"`
	AudioTokens  int `json:"audio_tokens"`
	// CacheWriteTokens is sent by the models that bill cache writes
	// (Chat.CacheWriteModels), absent otherwise.
	CacheWriteTokens *int `json:"cache_write_tokens,omitempty"`
}

type completionTokenDetail struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

type chunkBody struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	ServiceTier       string        `json:"service_tier"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	// Usage is absent without stream_options.include_usage; with it, null on
	// every chunk but the last.
	Usage json.RawMessage `json:"usage,omitempty"`
	// Obfuscation is random padding, absent when the request sets
	// stream_options.include_obfuscation to false.
	Obfuscation string `json:"obfuscation,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        any       `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// firstDelta opens the assistant message. content is "" before text and
// null before tool calls, as the real API sends.
type firstDelta struct {
	Role      string          `json:"role"`
	Content   *string         `json:"content"`
	Refusal   *string         `json:"refusal"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type contentDelta struct {
	Content string `json:"content"`
}

type toolCallsDelta struct {
	ToolCalls []toolCallDelta `json:"tool_calls"`
}

type emptyDelta struct{}

// toolCallDelta is one piece of a streamed tool call: the first carries id,
// type and name with empty arguments; later ones carry arguments only.
type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}
