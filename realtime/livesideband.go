package realtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/live"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"
)

// ErrLiveNotFound is the provider not knowing a live session: not yet
// (right after creation; attach again with backoff) or not any more.
var ErrLiveNotFound = errors.New("realtime: live session not found")

// maxLiveID bounds a live session id the gateway will put in a URL; the ids
// are opaque, so only their length and charset are checked.
const maxLiveID = 256

// LiveSideband is the gateway's WebSocket on a live session, opened with
// openai-go's Live.Sideband.Connect: the session's events in (the
// reflected audio skipped), the backend's commands out. Next from one
// goroutine; the send methods are safe from any.
type LiveSideband struct {
	conn *live.SidebandConnection
	// audio counts reflected audio events discarded, and audioBytes their
	// size: the API sends them to every sideband, about 128 kB/s.
	audio, audioBytes atomic.Int64
}

// AttachLive opens the sideband on a live session with the server key.
// graceful_close=false: closing this socket (a replica shutting down, a
// re-attach) must leave the call running; the session ends only by
// session.close. A 404 is ErrLiveNotFound; other refusals go through the
// one classifier.
func (c *Client) AttachLive(ctx context.Context, id string) (*LiveSideband, error) {
	if id == "" || len(id) > maxLiveID || !callIDRE.MatchString(id) {
		return nil, fmt.Errorf("realtime: live session id %q", id)
	}
	var conn *live.SidebandConnection
	err := c.dial(ctx, "attach to live session "+id, ErrLiveNotFound, func(ctx context.Context, hc *http.Client) (err error) {
		conn, err = c.oai.Live.Sideband.Connect(ctx, id,
			live.SidebandConnectionOptions{MaxMessageBytes: MaxEventBytes, MaxBufferedBytes: maxBufferedBytes, CloseTimeout: time.Second},
			option.WithQuery("graceful_close", "false"), option.WithHTTPClient(hc))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &LiveSideband{conn: conn}, nil
}

// AttachLiveRetry attaches, retrying ErrLiveNotFound with backoff until
// within has passed.
func (c *Client) AttachLiveRetry(ctx context.Context, id string, within time.Duration) (*LiveSideband, error) {
	return retryNotFound(ctx, within, ErrLiveNotFound, func() (*LiveSideband, error) { return c.AttachLive(ctx, id) })
}

// LiveEvent is one session event as the gateway reads it: its type, and
// the event as sent, decoded into the one variant its reader asks for.
// openai-go's union, live.ConnectServerEventUnion, holds every variant's
// fields at once (24 KB a value, copied on each hand-over) and its As
// methods decode the raw event again anyway; a held session kept sixteen
// of them queued and grew its goroutines' stacks to hold more.
type LiveEvent struct {
	Type string
	raw  []byte
}

// RawJSON is the event as the provider sent it.
func (e LiveEvent) RawJSON() string { return string(e.raw) }

// The variants the gateway reads, decoded with openai-go's types. ok is
// false unless every field the gateway acts on came as its type says:
// openai-go's decoder leaves a mismatched field zero without an error,
// and a zero the holder acted on would be wrong (a session.closed whose
// seconds did not decode is not the final usage; a delegation without an
// id is nothing to claim).
func (e LiveEvent) AsInputTranscriptDeltaEvent() (v live.InputTranscriptDeltaEvent, ok bool) {
	ok = decodeAs(e.raw, &v) && valid(v.JSON.Delta, v.JSON.StartMs, v.JSON.EndMs)
	return v, ok
}

func (e LiveEvent) AsOutputTranscriptDeltaEvent() (v live.OutputTranscriptDeltaEvent, ok bool) {
	ok = decodeAs(e.raw, &v) && valid(v.JSON.Delta, v.JSON.StartMs, v.JSON.EndMs)
	return v, ok
}

func (e LiveEvent) AsDelegationCreatedEvent() (v live.DelegationCreatedEvent, ok bool) {
	ok = decodeAs(e.raw, &v) && valid(v.JSON.OffsetMs, v.Delegation.JSON.ID)
	return v, ok
}

func (e LiveEvent) AsSessionUsageUpdatedEvent() (v live.SessionUsageUpdatedEvent, ok bool) {
	ok = decodeAs(e.raw, &v) && valid(v.Usage.JSON.Seconds)
	return v, ok
}

func (e LiveEvent) AsSessionClosedEvent() (v live.SessionClosedEvent, ok bool) {
	ok = decodeAs(e.raw, &v) && valid(v.JSON.Reason, v.Usage.JSON.Seconds)
	return v, ok
}

func decodeAs[T any](raw []byte, v *T) bool { return json.Unmarshal(raw, v) == nil }

// valid: every field was present and of its type.
func valid(fs ...respjson.Field) bool {
	for _, f := range fs {
		if !f.Valid() {
			return false
		}
	}
	return true
}

// Next returns the next session event the gateway acts on. The reflected
// audio copies are discarded by their type alone, their payload never
// decoded; unknown types come back too, for the caller to ignore.
func (s *LiveSideband) Next(ctx context.Context) (LiveEvent, error) {
	for {
		raw, err := s.conn.RecvRaw(ctx)
		if err != nil {
			return LiveEvent{}, err
		}
		typ := eventType(raw)
		if reflectedType(typ) {
			s.audio.Add(1)
			s.audioBytes.Add(int64(len(raw)))
			continue
		}
		return LiveEvent{Type: typ, raw: raw}, nil
	}
}

// Discarded reports the reflected audio events skipped so far and their
// bytes.
func (s *LiveSideband) Discarded() (events, bytes int64) { return s.audio.Load(), s.audioBytes.Load() }

// reflectedType reports an event type that is a copy of the call's audio.
func reflectedType(typ string) bool {
	return typ == "session.input_audio.append" || typ == "session.output_audio.delta"
}

// eventType reads an event's type only: the first member when it is
// "type" (as the API and the simulator send it), else one pass that keeps
// nothing but the type. An object with several "type" members is no
// well-formed event; which of them counts here is left unspecified.
func eventType(raw []byte) string {
	if typ := leadingType(raw); typ != "" {
		return typ
	}
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &head)
	return head.Type
}

// leadingType returns the event's type when it is the object's first
// member, reading only that far; "" otherwise.
func leadingType(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	if k, err := dec.Token(); err != nil || k != "type" {
		return ""
	}
	v, err := dec.Token()
	if err != nil {
		return ""
	}
	typ, _ := v.(string)
	return typ
}

// Think appends silent context for a delegation: progress the voice may
// use but does not read out. It cancels pending acknowledgements.
func (s *LiveSideband) Think(ctx context.Context, delegationID, content, eventID string) error {
	ev := live.ConnectClientEventParamOfSessionThinkingAppend(content, delegationID)
	ev.OfSessionThinkingAppend.EventID = optString(eventID)
	return s.conn.Send(ctx, ev)
}

// Comment appends a delegation's result for the voice to say (paraphrased).
func (s *LiveSideband) Comment(ctx context.Context, delegationID, content, eventID string) error {
	ev := live.ConnectClientEventParamOfSessionCommentaryAppend(content, delegationID)
	ev.OfSessionCommentaryAppend.EventID = optString(eventID)
	return s.conn.Send(ctx, ev)
}

// Instruct appends trusted instructions, for a delegation or, with
// delegationID "", for the whole session (an explicit null).
func (s *LiveSideband) Instruct(ctx context.Context, delegationID, content, eventID string) error {
	ev := live.ConnectClientEventUnionParam{OfSessionInstructionsAppend: &live.InstructionsAppendEventParam{
		Content: content, DelegationID: param.Null[string](), EventID: optString(eventID)}}
	if delegationID != "" {
		ev.OfSessionInstructionsAppend.DelegationID = openai.String(delegationID)
	}
	return s.conn.Send(ctx, ev)
}

// CloseSession asks the provider to end the session; session.closed, with
// the reason and the final usage, follows on Next.
func (s *LiveSideband) CloseSession(ctx context.Context) error {
	return s.conn.Send(ctx, live.ConnectClientEventUnionParam{OfSessionClose: &live.SessionCloseEventParam{}})
}

// Close closes the socket; the session goes on (graceful_close=false).
func (s *LiveSideband) Close() error { return s.conn.Close() }

func optString(s string) param.Opt[string] {
	if s == "" {
		return param.Opt[string]{}
	}
	return openai.String(s)
}
