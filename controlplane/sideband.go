package controlplane

import (
	"context"
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/realtime"
)

// eventConn is what a holder reads a call's server events from and sends
// its client events on: a sideband socket (*realtime.Sideband), or a
// relayed call's provider channel (relayLink).
type eventConn interface {
	Read() ([]byte, error)
	Send(event []byte) error
	Close() error
}

// socket is an eventConn as the holder's source of events. Its Read takes
// no context: the reader's stop closes it.
type socket struct{ eventConn }

func (s socket) Next(context.Context) ([]byte, error) { return s.Read() }

// call is the driver (hold.go) of a held sideband or relayed call: its
// events are the Realtime API's server events (events.go). Only its
// holder goroutine touches it.
type call struct {
	*held
	noWork
	sb       eventConn
	link     *relayLink          // a relayed call's channel; nil for a sideband
	answered map[string]bool     // function calls run or cut short, by call_id
	written  map[string]fnCall   // calls whose arguments are done, waiting for their item or response
	outputs  map[string]*answers // outputs waiting for their response's response.done, by response id
	unsent   [][]byte            // events a dropped socket did not take, sent after re-attaching
	expired  bool                // the provider said session_expired
}

// fnCall is a function call whose arguments the model has written.
type fnCall struct{ response, name, args string }

// answers are the outputs of one response's calls, and the gateway's own
// time spent on them, for the round-trip metric.
type answers struct {
	items    [][]byte
	overhead time.Duration
}

func newCall(h *held, link *relayLink) *call {
	return &call{held: h, link: link, answered: map[string]bool{}, written: map[string]fnCall{}, outputs: map[string]*answers{}}
}

// attach opens the call's events: the sideband socket, with the gateway's
// config sent at once (a sideband is promised no session.created, and the
// phone may have changed the session first) and, after a drop, what the
// dropped socket did not take; or a relayed call's channel, open already,
// whose config the phone cannot change.
func (c *call) attach(ctx context.Context, again bool) (source[[]byte], error) {
	if c.link != nil {
		c.sb = c.link
		return socket{c.link}, nil
	}
	sb, err := c.s.rt.AttachRetry(ctx, c.callID, c.s.cfg.AttachWithin)
	if err != nil {
		return nil, err
	}
	c.sb = sb
	c.sendConfig()
	if again {
		c.resend()
	}
	return socket{sb}, nil
}

// dropped reads why the call's events stopped: the provider's maximum
// length, the relayed call's end (a relayed call cannot be attached
// again), the socket closed with a normal close (the call ended under it:
// the app left), or a drop, after which the call may well be up.
func (c *call) dropped(err error) (string, bool) {
	why := relayEndReason(err)
	switch {
	case c.expired:
		return ReasonUpstreamExpired, false
	case why != "":
		return why, false
	case realtime.CloseCode(err) == 1000:
		return ReasonAppClosed, false
	}
	return "", true
}

// hangup ends the call at the provider, which closes the sideband after
// the call's last events.
func (c *call) hangup(ctx context.Context) { c.s.hangup(ctx, c.callID) }

// notify asks the model to speak notice i. A response already under way
// refuses it (the provider answers with an error event); the user hears
// the next one.
func (c *call) notify(_ context.Context, i int) {
	ev, _ := json.Marshal(map[string]any{"type": "response.create", "response": map[string]any{"instructions": noticeText[i]}})
	c.send(ev)
}

// beforeEnd hangs up a call that may be up with nobody holding it: one
// ended in error, and every relayed call, whose legs go with its holder.
func (c *call) beforeEnd(ctx context.Context, reason string) {
	if reason == ReasonError || c.mode == ModeRelay {
		c.s.hangup(ctx, c.callID)
	}
}

// flush saves the usage observed so far now.
func (c *call) flush(ctx context.Context) {
	c.s.noteUsage(c.id, c.observed)
	c.s.saveUsage(ctx, c.id)
}

// send writes client events; one the socket did not take is kept for
// after the re-attach.
func (c *call) send(events ...[]byte) {
	for i, e := range events {
		if err := c.sb.Send(e); err != nil {
			c.unsent = append(c.unsent, events[i:]...)
			return
		}
	}
}

func (c *call) resend() {
	pending := c.unsent
	c.unsent = nil
	c.send(pending...)
}

// noWork is the side work of a mode that runs none beside its call.
type noWork struct{}

func (noWork) results() <-chan delegationOut          { return nil }
func (noWork) deliver(context.Context, delegationOut) {}
func (noWork) due(context.Context, time.Time)         {}
func (noWork) wake(next time.Time) time.Time          { return next }
func (noWork) release()                               {}
