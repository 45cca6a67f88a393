// Package llm is the text side's seam to model providers (DESIGN §11):
// messages and tool schemas go in as plain data, a normalized stream of
// text deltas, tool calls, usage and a finish reason comes out, and every
// failure is one *Error with a provider-neutral code. No SDK type crosses
// it. The provider router (retries, failover, circuit breaker, budgets,
// degraded mode) will sit behind the same Provider interface.
package llm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/voxgate/voxgate/internal/aierr"
	"github.com/voxgate/voxgate/internal/randid"
)

// Roles of a message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one turn of the conversation sent to a model.
type Message struct {
	Role    string
	Content string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID names the call a tool message answers.
	ToolCallID string
}

// ToolSpec is a function the model may call, as data.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object
	// Strict asks the provider to hold the call's arguments to Parameters
	// exactly (OpenAI's and Anthropic's strict). A provider that cannot
	// is passed over by the router (Limited), never sent it without.
	Strict bool
}

// ToolCall is one function call the model made.
type ToolCall struct {
	// ID is minted by the gateway (NewCallID), never the provider's own:
	// every provider takes it back in the history, so a tool loop may
	// change provider between iterations (DESIGN §11). Callers still key
	// calls by turn themselves.
	ID        string
	Name      string
	Arguments string // JSON text, as the model wrote it
	// Signature is opaque data a provider needs back with the call in
	// later requests (Gemini's thought signature); SignedBy is the kind of
	// provider that made it ("gemini"). Adapters of other kinds ignore it.
	Signature string
	SignedBy  string
}

// NewCallID mints a tool call id that every provider accepts: under 40
// characters, letters, digits and underscores only.
func NewCallID() string { return randid.New("call_", 12) }

// Request is one model call.
type Request struct {
	Model    string
	Messages []Message
	Tools    []ToolSpec
	// ToolChoice is "" or "auto", "none", "required", or a tool's name to
	// force that tool.
	ToolChoice string
	// MaxOutputTokens bounds the answer; 0 leaves the provider's default.
	MaxOutputTokens int
	// SafetyIdentifier is a salted hash of the user, never the user id.
	SafetyIdentifier string
	// ReasoningEffort is sent as is ("none", "low", …); "" sends none,
	// unless the model takes tools only at "none" (ToolsNeedNoReasoning).
	ReasoningEffort string
	// ParallelToolCalls false asks for at most one tool call an answer;
	// nil leaves the provider's default (several). It matters only with
	// Tools.
	ParallelToolCalls *bool
	// Whole asks the provider for the answer in one response rather than a
	// stream (a completion the client asked with stream: false). Events
	// come as they would from a stream, all at once. An adapter that
	// cannot may stream; the router gives a whole call its answer
	// deadline (AnswerTime) instead of the first-content one.
	Whole bool
	// Continue says the last message is the assistant's own partial answer,
	// which the model is to continue, never repeat: a router's continuation
	// of an answer cut after commit (docs/llm.md, "Continuation"). An
	// adapter sends what its provider needs for that (an OpenAI-compatible
	// server's continue_final_message); Anthropic's prefill is the trailing
	// assistant message itself.
	Continue bool
	// PromptCacheTTL is the least time the prompt's cache writes are to
	// live ("30m" or "12h", OpenAI's prompt_cache_options.ttl), set by the
	// router from the target (Target.PromptCacheTTL); "" asks nothing.
	// The provider's usage does not say which TTL a write was made under,
	// so the adapter reports the writes under the one it asked
	// (Usage.CacheWrite12hInputTokens).
	PromptCacheTTL string
	// ServiceTier is the tier the call asks to be served on (OpenAI's
	// service_tier), set by the router from the target
	// (Target.ServiceTier); "" asks nothing. The usage's tier is the one
	// the response names (Usage.ServiceTier), which may differ.
	ServiceTier string
	// ResponseFormat asks for the answer as JSON (Chat Completions'
	// response_format, Responses' text.format); nil is text, as every
	// answer is by default. A provider that cannot hold its answer to it
	// is Limited: it names "response_format" and the router passes it
	// over (docs/llm.md, "Structured outputs").
	ResponseFormat *ResponseFormat
}

// ResponseFormat is the JSON an answer must be: any JSON object
// (FormatJSONObject) or a value a schema accepts (FormatJSONSchema).
type ResponseFormat struct {
	Type string
	// Name, Description, Schema and Strict are the json_schema's: its
	// name (letters, digits, _ and -), what it is for, the JSON Schema
	// object, and whether the provider is to hold the answer to it
	// exactly (OpenAI's strict).
	Name        string
	Description string
	Schema      json.RawMessage
	Strict      bool
}

// The types of a ResponseFormat.
const (
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// The TTLs a target may ask its cache writes to live (PromptCacheTTL).
const (
	CacheTTL30m = "30m"
	CacheTTL12h = "12h"
)

// OneCall reports whether req asks for at most one tool call an answer.
func (r Request) OneCall() bool { return r.ParallelToolCalls != nil && !*r.ParallelToolCalls }

// Limited is a provider that cannot act on every request: Unhonoured
// names the first field of req it cannot honour ("tools[0].function.strict"),
// "" when it can honour all of it. The router passes such a target over
// rather than send the request without what the client asked for.
type Limited interface {
	Unhonoured(req Request) string
}

// Usage is a call's token counts. CachedInputTokens and
// CacheWriteInputTokens (input written to the prompt cache, which some
// models bill apart) are disjoint parts of InputTokens (DESIGN §10);
// adapters normalize providers that report them apart.
type Usage struct {
	Model                 string // the model as the provider reports it (often a dated snapshot)
	InputTokens           int64
	CachedInputTokens     int64
	CacheWriteInputTokens int64
	// CacheWrite12hInputTokens is the part of CacheWriteInputTokens
	// written under a 12-hour TTL, billed at twice the 30-minute write.
	CacheWrite12hInputTokens int64
	OutputTokens             int64
	// ServiceTier is the tier the provider's response named as serving
	// the call (OpenAI's service_tier: "default", "flex", "priority"); ""
	// when it named none. It multiplies the call's price.
	ServiceTier string
}

// EventKind says what an Event carries.
type EventKind int

const (
	// EventText: Text is a delta of the answer.
	EventText EventKind = iota + 1
	// EventToolCall: ToolCall is complete (name and whole arguments).
	EventToolCall
	// EventDone: the stream ended; Usage and FinishReason are set.
	EventDone
	// EventToolCallDelta: a piece of a tool call as it streams. Index is
	// the call's position in the response; the first piece of a call
	// carries its ID and Name, every piece a fragment of Arguments. The
	// first delta commits a routed turn (DESIGN §11); the whole call still
	// follows as one EventToolCall, and only that one may run.
	EventToolCallDelta
	// EventSkipped: the adapter set aside a chunk it could not read, which
	// carried none of the answer, and the stream goes on (docs/llm.md,
	// "Continuation"). A router counts it and never passes it on; other
	// callers ignore it.
	EventSkipped
)

// Finish reasons.
const (
	FinishStop          = "stop"
	FinishToolCalls     = "tool_calls"
	FinishLength        = "length"
	FinishContentFilter = "content_filter"
)

// Event is one item of a normalized stream.
type Event struct {
	Kind         EventKind
	Text         string
	ToolCall     *ToolCall
	Index        int // the call's position, for EventToolCallDelta
	Usage        *Usage
	FinishReason string
	// Trace is set on a Router's EventDone: every attempt, the one that
	// answered among them (Trace.Answered).
	Trace Trace
}

// Stream yields a call's events in order. Next returns an EventDone last,
// then io.EOF; a failure mid-stream is an *Error. Close releases the
// connection and cancels the upstream call if it is still running; it is
// safe to call more than once.
type Stream interface {
	Next(ctx context.Context) (Event, error)
	Close() error
}

// Provider starts model calls.
type Provider interface {
	// Name is the provider's name in traces and records ("openai", "sim").
	Name() string
	// Stream starts a call. An error before the first event is an *Error.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Code is a provider-neutral failure (DESIGN §11), shared with the voice
// side through the one classifier.
type Code = aierr.Code

// The codes of DESIGN §11.
const (
	ProviderTimeout         = aierr.Timeout
	ProviderRateLimit       = aierr.RateLimit
	ProviderAuth            = aierr.Auth
	ProviderUnavailable     = aierr.Unavailable
	ProviderInvalidResponse = aierr.InvalidResponse
	ProviderContentFilter   = aierr.ContentFilter
	ProviderContextLength   = aierr.ContextLength
	ProviderNetwork         = aierr.Network
	UnknownProviderError    = aierr.Unknown
)

// Error is a normalized provider failure.
type Error struct {
	Provider  string
	Code      Code
	Retryable bool
	// RetryAfter is the provider's advice in seconds, 0 when it gave none.
	RetryAfter int
	// Status is the provider's HTTP status, 0 when there was none (a
	// network failure, a timeout, an error inside a 200 stream).
	Status int
	// Usage is what the provider reported for the call before it failed
	// (a content filter's stop), nil when it reported none: such a call
	// may be billed, but never as a completion.
	Usage *Usage
	Err   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("llm: %s: %s: %v", e.Provider, e.Code, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
