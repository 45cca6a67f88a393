package live

import (
	"encoding/json"

	"github.com/voxgate/voxgate/sim/core"
)

// Wire shapes of GPT-Live server events, from openai-go v3.96.0's live
// package (ServerEventUnion and its variants). One flat struct covers every
// event; each constructor sets the fields its type requires, and
// TestLiveEventsDecodeWithOpenAI checks every type the simulator sends.
type liveEvent struct {
	Type          string          `json:"type"`
	EventID       string          `json:"event_id,omitempty"` // absent on reflected audio, as in the SDK's payloads
	ClientEventID string          `json:"client_event_id,omitempty"`
	Delta         *string         `json:"delta,omitempty"`
	Audio         string          `json:"audio,omitempty"`
	StartMS       *int64          `json:"start_ms,omitempty"`
	EndMS         *int64          `json:"end_ms,omitempty"`
	OffsetMS      *int64          `json:"offset_ms,omitempty"`
	Delegation    *liveDelegation `json:"delegation,omitempty"`
	Reason        string          `json:"reason,omitempty"`
	Session       *liveResource   `json:"session,omitempty"`
	Usage         *liveUsage      `json:"usage,omitempty"`
	ContextWindow *liveContext    `json:"context_window,omitempty"`
	Error         *liveError      `json:"error,omitempty"`
}

// liveDelegation is session.delegation.created's delegation: metadata only,
// never the task text.
type liveDelegation struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Target string `json:"target"`
}

type liveUsage struct {
	Seconds float64 `json:"seconds"`
}

type liveContext struct {
	UsageRatio float64 `json:"usage_ratio"`
}

// liveError is the body of an `error` event (LiveError).
type liveError struct {
	Type          string `json:"type"`
	Code          string `json:"code"`
	Message       string `json:"message"`
	Param         string `json:"param,omitempty"`
	ClientEventID string `json:"client_event_id,omitempty"`
}

// liveResource is the session snapshot of session.started, session.updated
// and session.closed (SessionResource). What the client set is echoed as it
// sent it.
type liveResource struct {
	ID           string          `json:"id"`
	ExpiresAt    int64           `json:"expires_at"`
	Model        string          `json:"model"`
	Status       string          `json:"status"`
	Instructions *string         `json:"instructions"`
	Store        bool            `json:"store"`
	Audio        liveAudio       `json:"audio"`
	Delegation   liveDelegConfig `json:"delegation"`
	Client       json.RawMessage `json:"client,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Triggers     json.RawMessage `json:"triggers,omitempty"`
}

type liveAudio struct {
	Output struct {
		Voice json.RawMessage `json:"voice"`
	} `json:"output"`
}

// liveDelegConfig is the session's delegation (ClientDelegation): the sim
// serves client delegation only.
type liveDelegConfig struct {
	Type                   string `json:"type"`
	AcknowledgementDelayMS int64  `json:"acknowledgement_delay_ms"`
}

func newLiveEvent(typ string) *liveEvent {
	return &liveEvent{Type: typ, EventID: "event_" + core.RandomID()[:21]}
}

// span sets the event's place on the session timeline.
func (e *liveEvent) span(start, end int64) *liveEvent {
	e.StartMS, e.EndMS = &start, &end
	return e
}

func liveErrorEvent(e *core.APIError, clientEventID string) *liveEvent {
	ev := newLiveEvent("error")
	ev.ClientEventID = clientEventID
	ev.Error = &liveError{Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param, ClientEventID: clientEventID}
	return ev
}
