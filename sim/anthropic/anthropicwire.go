package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// anthError is an error in Anthropic's wire shape:
// {"type":"error","error":{"type","message"},"request_id"} with its status.
type anthError struct {
	Status  int
	Type    string
	Message string
	// RetryAfter, in seconds, is sent as the retry-after header when
	// positive.
	RetryAfter int
}

func (e *anthError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

type anthErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id,omitempty"`
}

func (e *anthError) body(requestID string) []byte {
	var b anthErrorBody
	b.Type = "error"
	b.Error.Type, b.Error.Message = e.Type, e.Message
	b.RequestID = requestID
	out, _ := json.Marshal(b) // strings only: cannot fail
	return out
}

func writeAnthError(w http.ResponseWriter, e *anthError) {
	h := w.Header()
	body := e.body(h.Get("Request-Id"))
	h.Set("Content-Type", "application/json")
	h.Set("X-Should-Retry", strconv.FormatBool(e.Status == http.StatusTooManyRequests || e.Status >= 500))
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

// asAnthError turns an error of the OpenAI surface's helpers (the body
// limit) into Anthropic's shape, by status.
func asAnthError(e *core.APIError) *anthError {
	typ := "invalid_request_error"
	switch {
	case e.Status == http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case e.Status == http.StatusUnauthorized:
		typ = "authentication_error"
	case e.Status == http.StatusNotFound:
		typ = "not_found_error"
	case e.Status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case e.Status >= 500:
		typ = "api_error"
	}
	return &anthError{Status: e.Status, Type: typ, Message: e.Message, RetryAfter: e.RetryAfter}
}

// The real API's refusals, by fault.

func anthRateLimited(retryAfter int) *anthError {
	return &anthError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", RetryAfter: retryAfter,
		Message: "This request would exceed the rate limit for your organization (simulated) of 50 requests per minute. Please try again later."}
}

func anthOverloaded(retryAfter int) *anthError {
	return &anthError{Status: 529, Type: "overloaded_error", Message: "Overloaded", RetryAfter: retryAfter}
}

func anthServerError() *anthError {
	return &anthError{Status: http.StatusInternalServerError, Type: "api_error", Message: "Internal server error"}
}

func anthCreditTooLow() *anthError {
	return anthInvalid("Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")
}

func anthPromptTooLong(tokens int) *anthError {
	return anthInvalid(fmt.Sprintf("prompt is too long: %d tokens > %d maximum", max(tokens, anthContextWindow+1), anthContextWindow))
}

// anthContextWindow is the window a context_length fault claims was exceeded.
const anthContextWindow = 200000

// anthUsage is a Message's usage. input_tokens excludes the cache classes,
// as the real API reports it.
type anthUsage struct {
	InputTokens              int             `json:"input_tokens"`
	CacheCreationInputTokens int             `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int             `json:"cache_read_input_tokens"`
	CacheCreation            *anthCacheSplit `json:"cache_creation,omitempty"`
	OutputTokens             int             `json:"output_tokens"`
	ServiceTier              string          `json:"service_tier,omitempty"`
}

type anthCacheSplit struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

type anthTextBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthToolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anthMessageBody struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Role         string    `json:"role"`
	Model        string    `json:"model"`
	Content      []any     `json:"content"`
	StopReason   *string   `json:"stop_reason"`
	StopSequence *string   `json:"stop_sequence"`
	Usage        anthUsage `json:"usage"`
}

// anthAnswer is a completion in Anthropic's terms: its ids, stop reason
// and usage classes.
type anthAnswer struct {
	id     string
	model  string
	text   string
	calls  []openai.ToolCall
	stop   string
	input  int // uncached input
	read   int // cache_read_input_tokens
	write  int // cache_creation_input_tokens
	output int
}

// newAnthAnswer renders a completion of the script engine; p gives the
// prompt's cache split.
func newAnthAnswer(c *openai.Completion, p openai.PromptTokens) *anthAnswer {
	a := &anthAnswer{id: "msg_" + core.RandomID(), model: c.Model, text: c.Text, calls: c.Calls,
		output: c.Usage.CompletionTokens}
	prompt := c.Usage.PromptTokens
	a.read = min(p.Cached, prompt)
	a.write = min(p.Written, prompt-a.read)
	a.input = prompt - a.read - a.write
	switch c.Finish {
	case "tool_calls":
		a.stop = "tool_use"
	case "length":
		a.stop = "max_tokens"
	default:
		a.stop = "end_turn"
	}
	for i := range a.calls {
		a.calls[i].ID = "toolu_" + core.RandomID()
	}
	return a
}

// usage is the whole message's usage with output tokens out.
func (a *anthAnswer) usage(out int) anthUsage {
	return anthUsage{InputTokens: a.input, CacheCreationInputTokens: a.write, CacheReadInputTokens: a.read,
		CacheCreation: &anthCacheSplit{Ephemeral5m: a.write}, OutputTokens: out, ServiceTier: "standard"}
}

// toolInput is a tool call's arguments as the input object the API sends: a
// model cut off by max_tokens, or a script sending malformed arguments on
// purpose, leaves text that is no object, which a non-streamed Message
// carries as {}.
func toolInput(tc openai.ToolCall) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(tc.Arguments), &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(openai.CompactJSON(json.RawMessage(tc.Arguments)))
}

// message is the non-streamed Message; refused answers carry no content.
func (a *anthAnswer) message(refused bool) []byte {
	stop := a.stop
	m := anthMessageBody{ID: a.id, Type: "message", Role: "assistant", Model: a.model, Content: []any{},
		StopReason: &stop, Usage: a.usage(a.output)}
	if refused {
		stop = "refusal"
		m.Usage.OutputTokens = 0
	} else {
		switch {
		case a.thoughtBeforeTools():
			m.Content = append(m.Content, anthThinkingBlock{Type: "thinking", Thinking: a.text, Signature: thinkingSignature(a.model)})
		case a.text != "":
			m.Content = append(m.Content, anthTextBlock{Type: "text", Text: a.text})
		}
		for _, tc := range a.calls {
			m.Content = append(m.Content, anthToolUseBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc)})
		}
	}
	b, _ := json.Marshal(m) // plain structs: cannot fail
	return b
}

// setAnthHeaders adds the headers the real API sends with every answer it
// generates.
func setAnthHeaders(w http.ResponseWriter, start time.Time) {
	h := w.Header()
	h.Set("Anthropic-Organization-Id", "00000000-0000-4000-8000-00000000516d")
	h.Set("X-Envoy-Upstream-Service-Time", strconv.FormatInt(time.Since(start).Milliseconds(), 10))
}
