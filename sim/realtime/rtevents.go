package realtime

import (
	"encoding/json"

	"github.com/voxgate/voxgate/sim/core"
)

// Wire shapes of Realtime server events. One flat struct covers every event:
// each constructor sets exactly the fields its event type requires (pointers
// where a required value may be zero), and the fidelity test checks every
// type the simulator emits against the official schema.

// rtEvent is one server event.
type rtEvent struct {
	EventID        string        `json:"event_id"`
	Type           string        `json:"type"`
	ResponseID     string        `json:"response_id,omitempty"`
	ItemID         string        `json:"item_id,omitempty"`
	PreviousItemID prevItem      `json:"previous_item_id,omitzero"`
	OutputIndex    *int          `json:"output_index,omitempty"`
	ContentIndex   *int          `json:"content_index,omitempty"`
	CallID         string        `json:"call_id,omitempty"`
	Name           string        `json:"name,omitempty"`
	Arguments      *string       `json:"arguments,omitempty"`
	Delta          *string       `json:"delta,omitempty"`
	Transcript     *string       `json:"transcript,omitempty"`
	Text           *string       `json:"text,omitempty"`
	AudioStartMS   *int          `json:"audio_start_ms,omitempty"`
	AudioEndMS     *int          `json:"audio_end_ms,omitempty"`
	Part           *rtContent    `json:"part,omitempty"`
	Item           *rtItem       `json:"item,omitempty"`
	Response       *rtResponse   `json:"response,omitempty"`
	Session        sessionConfig `json:"session,omitempty"`
	Error          *rtError      `json:"error,omitempty"`
	Usage          any           `json:"usage,omitempty"` // an input transcription's: tokens or duration form
	RateLimits     []rateLimit   `json:"rate_limits,omitempty"`
}

// rateLimit is one entry of rate_limits.updated.
type rateLimit struct {
	Name         string  `json:"name"`
	Limit        int     `json:"limit"`
	Remaining    int     `json:"remaining"`
	ResetSeconds float64 `json:"reset_seconds"`
}

// rtItem is a conversation item (message, function_call or
// function_call_output) as the API renders it.
type rtItem struct {
	ID        string      `json:"id"`
	Object    string      `json:"object"`
	Type      string      `json:"type"`
	Status    string      `json:"status,omitempty"`
	Role      string      `json:"role,omitempty"`
	Content   []rtContent `json:"content,omitzero"` // [] for messages, absent otherwise
	CallID    string      `json:"call_id,omitempty"`
	Name      string      `json:"name,omitempty"`
	Arguments *string     `json:"arguments,omitempty"`
	Output    *string     `json:"output,omitempty"`
}

// rtContent is one content part of a message item, or the part of a
// response.content_part.* event.
type rtContent struct {
	Type       string  `json:"type"`
	Text       *string `json:"text,omitempty"`
	Audio      string  `json:"audio,omitempty"`
	Transcript *string `json:"transcript,omitempty"`
}

// rtResponse is the response resource of response.created/done.
type rtResponse struct {
	Object           string         `json:"object"`
	ID               string         `json:"id"`
	Status           string         `json:"status"`
	StatusDetails    *statusDetails `json:"status_details"` // null when completed, as the API sends it
	Output           []rtItem       `json:"output"`
	ConversationID   string         `json:"conversation_id"`
	OutputModalities []string       `json:"output_modalities"`
	MaxOutputTokens  any            `json:"max_output_tokens"`
	Audio            *responseAudio `json:"audio,omitempty"`
	Usage            *rtUsage       `json:"usage"` // null until response.done
	Metadata         map[string]any `json:"metadata"`
}

type statusDetails struct {
	Type   string       `json:"type"`
	Reason string       `json:"reason,omitempty"`
	Error  *statusError `json:"error,omitempty"`
}

// statusError is status_details.error of a failed response.
type statusError struct {
	Type string `json:"type"`
	Code string `json:"code,omitempty"`
}

type responseAudio struct {
	Output struct {
		Format map[string]any `json:"format"`
		Voice  string         `json:"voice"`
	} `json:"output"`
}

// rtUsage is response.done's usage, with the real field names.
type rtUsage struct {
	TotalTokens       int `json:"total_tokens"`
	InputTokens       int `json:"input_tokens"`
	OutputTokens      int `json:"output_tokens"`
	InputTokenDetails struct {
		TextTokens          int `json:"text_tokens"`
		AudioTokens         int `json:"audio_tokens"`
		ImageTokens         int `json:"image_tokens"`
		CachedTokens        int `json:"cached_tokens"`
		CachedTokensDetails struct {
			TextTokens  int `json:"text_tokens"`
			AudioTokens int `json:"audio_tokens"`
			ImageTokens int `json:"image_tokens"`
		} `json:"cached_tokens_details"`
	} `json:"input_token_details"`
	OutputTokenDetails struct {
		TextTokens  int `json:"text_tokens"`
		AudioTokens int `json:"audio_tokens"`
	} `json:"output_token_details"`
}

// rtTranscriptU is the usage of an input transcription (type "tokens").
type rtTranscriptU struct {
	Type              string `json:"type"`
	TotalTokens       int    `json:"total_tokens"`
	InputTokens       int    `json:"input_tokens"`
	InputTokenDetails struct {
		TextTokens  int `json:"text_tokens"`
		AudioTokens int `json:"audio_tokens"`
	} `json:"input_token_details"`
	OutputTokens int `json:"output_tokens"`
}

// rtDurationU is the usage of an input transcription billed by the second
// (type "duration").
type rtDurationU struct {
	Type    string  `json:"type"`
	Seconds float64 `json:"seconds"`
}

// rtError is the body of an `error` event.
type rtError struct {
	Type    string  `json:"type"`
	Code    *string `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	EventID *string `json:"event_id"`
}

// prevItem is a previous_item_id: the id of the item before, or JSON null
// for the first item, as the API sends it. The zero value is left out, for
// events without one.
type prevItem struct {
	id  *string
	set bool
}

// after is the previous_item_id of an item placed after id (nil: first).
func after(id *string) prevItem { return prevItem{id: id, set: true} }

func (p prevItem) IsZero() bool                 { return !p.set }
func (p prevItem) MarshalJSON() ([]byte, error) { return json.Marshal(p.id) }

func Ptr[T any](v T) *T { return &v }

func newEvent(typ string) *rtEvent {
	return &rtEvent{EventID: "event_" + core.RandomID()[:21], Type: typ}
}

// optional returns nil for "", so absent values render as null.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func errorEvent(e *core.APIError, clientEventID string) *rtEvent {
	ev := newEvent("error")
	ev.Error = &rtError{Type: e.Type, Code: optional(e.Code), Message: e.Message, Param: optional(e.Param),
		EventID: optional(clientEventID)}
	return ev
}
