package realtime

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pion/webrtc/v4"
)

// DataChannelLabel is the Realtime API's events channel, which the caller
// (the phone; on the provider leg, the relay) creates.
const DataChannelLabel = "oai-events"

// Action is what Intercept decides for a message.
type Action int

const (
	// Forward relays the message to the other leg.
	Forward Action = iota
	// Drop relays nothing.
	Drop
	// Answer relays nothing and sends Verdict.Reply back to the sender.
	Answer
)

// Verdict is Intercept's decision.
type Verdict struct {
	Action Action
	Reply  []byte // for Answer
}

// Bounds on the events held for a leg whose channel is not open yet (the
// provider leg still connecting or being replaced; the phone's channel
// opening after the provider's first events).
const (
	maxPending      = 64
	maxPendingBytes = 1 << 20
)

// held are events waiting for a leg's channel.
type held struct {
	msgs  [][]byte
	bytes int
}

// wireChannel relays l's oai-events channel: each message through
// Intercept, then to the other leg.
func (r *Relay) wireChannel(l *leg, dc *webrtc.DataChannel) {
	dc.OnOpen(func() { r.opened(l, dc) })
	dc.OnMessage(func(m webrtc.DataChannelMessage) { r.relayMessage(l, m.Data) })
	dc.OnClose(func() { r.event(l, EventChannelClosed, "") })
}

// relayMessage runs one message from leg l through Intercept.
func (r *Relay) relayMessage(l *leg, msg []byte) {
	v := Verdict{Action: Forward}
	if r.p.Intercept != nil {
		v = r.p.Intercept(l.which, msg)
	}
	switch v.Action {
	case Drop:
	case Answer:
		_ = r.sendOn(l, v.Reply)
	default:
		r.deliver(l, msg)
	}
}

// deliver sends msg from leg from to the other leg, or holds it until
// that leg's channel opens (beyond the bounds, it is dropped and counted
// as refused).
func (r *Relay) deliver(from *leg, msg []byte) {
	r.mu.Lock()
	to := r.phone
	if from.which == LegPhone {
		to = r.prov
	}
	if to == nil || to.dc.Load() == nil || to.retired.Load() {
		q := &r.pending[from.which.other()]
		full := len(q.msgs) >= maxPending || q.bytes+len(msg) > maxPendingBytes
		if !full {
			q.msgs, q.bytes = append(q.msgs, msg), q.bytes+len(msg)
		}
		r.mu.Unlock()
		if full {
			r.event(from, EventMessageRefused, "the other leg's channel is not open and its queue is full")
		}
		return
	}
	r.mu.Unlock()
	r.send(from, to, msg)
}

// opened makes l's channel the one its events go to, and first sends the
// events held for it, in order. It holds r.mu throughout, so an event
// relayed meanwhile waits and keeps its place behind them.
func (r *Relay) opened(l *leg, dc *webrtc.DataChannel) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.dc.Store(dc)
	from := r.phone
	if l.which == LegPhone {
		from = r.prov
	}
	if (l != r.phone && l != r.prov) || from == nil {
		return // not (yet) the call's leg: nothing can be held for it
	}
	q := &r.pending[l.which]
	for _, msg := range q.msgs {
		r.send(from, l, msg)
	}
	q.msgs, q.bytes = nil, 0
}

// send relays msg to leg to, unless it is larger than to's peer takes
// (its a=max-message-size): pion refuses to send it, and a receiver
// given more than it advertised closes the channel. Either way the
// message is refused with an error event to the phone (the sender, or
// the receiver of an event it will not get), and both channels stay open.
func (r *Relay) send(from, to *leg, msg []byte) {
	limit := maxMessage(to)
	if len(msg) <= limit {
		if err := r.sendOn(to, msg); err == nil || !errors.Is(err, errTooLarge) {
			return
		}
	}
	r.event(from, EventMessageRefused, fmt.Sprintf("%d bytes, %s takes %d", len(msg), to.which, limit))
	phone := from
	if from.which == LegProvider {
		phone = to
	}
	_ = r.sendOn(phone, refusal(msg, limit, to.which))
}

var errTooLarge = errors.New("realtime: message larger than the peer takes")

// sendOn sends msg as text on l's channel.
func (r *Relay) sendOn(l *leg, msg []byte) error {
	dc := l.dc.Load()
	if dc == nil {
		return errors.New("realtime: channel not open")
	}
	if len(msg) > maxMessage(l) {
		return errTooLarge
	}
	return dc.SendText(string(msg))
}

// maxMessage is the largest message l's peer takes: its advertised
// a=max-message-size (pion's default when it advertised none).
func maxMessage(l *leg) int {
	if sctp := l.pc.SCTP(); sctp != nil {
		if n := sctp.GetCapabilities().MaxMessageSize; n > 0 {
			return int(n)
		}
	}
	return 65535
}

// Send sends msg to a leg's channel, as the gateway speaking for itself
// (a tool's output to the provider, a notice to the phone).
func (r *Relay) Send(to Leg, msg []byte) error {
	r.mu.Lock()
	l := r.phone
	if to == LegProvider {
		l = r.prov
	}
	r.mu.Unlock()
	if l == nil {
		return ErrRelayClosed
	}
	return r.sendOn(l, msg)
}

// refusal is the error event the phone gets for a message the relay would
// not carry to leg to, in the Realtime API's shape. It names the refused
// event's type, and for the phone's own event its event_id (as the API's
// errors name the client event they answer), when the message says them:
// it is a peer's text, read as untrusted and never echoed at length.
func refusal(msg []byte, limit int, to Leg) []byte {
	var head struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
	}
	_ = json.Unmarshal(msg, &head)
	if len(head.Type) > 64 {
		head.Type = ""
	}
	if len(head.EventID) > 64 {
		head.EventID = ""
	}
	var eventID any
	if head.EventID != "" && to == LegProvider {
		eventID = head.EventID
	}
	what := "an event"
	if head.Type != "" {
		what = fmt.Sprintf("a %q event", head.Type)
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{
		"type": "invalid_request_error", "code": "event_too_large", "param": nil, "event_id": eventID,
		"message": fmt.Sprintf("%s of %d bytes was not relayed: the %s side takes at most %d bytes.", what, len(msg), to, limit),
	}})
	return b
}
