package controlplane

import (
	"errors"
	"sync"

	"github.com/voxgate/voxgate/realtime"
)

// maxReadAhead bounds the provider events a relayed call holds for its
// holder, as a sideband socket's reader is bounded: past it the holder is
// not keeping up and the call ends.
const maxReadAhead = 16 * realtime.MaxEventBytes

// relayLink is a relayed call as its holder sees it: the provider's events
// to read, the provider's channel to send on (an eventConn, as a sideband
// socket is), and the legs' failures as the reason the call ended. It is
// fed by the relay's hooks (Intercept, OnEvent) on pion's goroutines.
type relayLink struct {
	s  *Service
	id string
	r  *realtime.Relay

	mu     sync.Mutex
	queue  [][]byte // provider events not yet read
	bytes  int
	wake   chan struct{} // a new event or the end, for the one reader
	ended  string        // the end reason once a leg failed or the link closed
	open   bool          // the provider's channel has spoken: it takes events
	unsent [][]byte      // the holder's events from before that

	closeOnce sync.Once
}

// linkEnded is Read's error once the call is over: why is the end reason.
type linkEnded struct{ why string }

func (e linkEnded) Error() string { return "controlplane: the relayed call ended: " + e.why }

// relayEndReason is the end reason a relayed call's read error carries,
// "" for any other error.
func relayEndReason(err error) string {
	var e linkEnded
	if errors.As(err, &e) {
		return e.why
	}
	return ""
}

func newRelayLink(s *Service, id string) *relayLink {
	return &relayLink{s: s, id: id, wake: make(chan struct{}, 1)}
}

// Read returns the next provider event, in order; after the end, the
// events already read ahead and then linkEnded.
func (l *relayLink) Read() ([]byte, error) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			ev := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.bytes -= len(ev)
			l.mu.Unlock()
			return ev, nil
		}
		ended := l.ended
		l.mu.Unlock()
		if ended != "" {
			return nil, linkEnded{ended}
		}
		<-l.wake
	}
}

// Send sends the holder's event to the provider. Before the provider's
// channel has said anything it is not open yet (the holder starts with the
// answer, before ICE): the event waits and goes first once it is.
func (l *relayLink) Send(ev []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open {
		l.unsent = append(l.unsent, ev)
		return nil
	}
	return l.r.Send(realtime.LegProvider, ev)
}

// Close ends both legs. The holder's reader then reads linkEnded.
func (l *relayLink) Close() error {
	l.end(ReasonError)
	l.closeOnce.Do(func() {
		l.s.relays.remove(l) // its last figures, read while its legs are up
		l.r.Close()
	})
	return nil
}

// end records why the call ended (the first reason stands) and wakes the
// reader.
func (l *relayLink) end(why string) {
	l.mu.Lock()
	if l.ended == "" {
		l.ended = why
	}
	l.mu.Unlock()
	l.signal()
}

func (l *relayLink) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// intercept is the relay's hook on the oai-events channel. Every provider
// event goes on to the phone (it may show the tool calls the gateway runs)
// and to the holder; a phone event that would change what only the
// gateway sets is answered with an error event and never reaches the
// provider.
func (l *relayLink) intercept(from realtime.Leg, msg []byte) realtime.Verdict {
	if from == realtime.LegPhone {
		typ, why := phoneEventRefusal(msg)
		if why == "" {
			return realtime.Verdict{Action: realtime.Forward}
		}
		l.s.relays.dropped.WithLabelValues(typ).Inc()
		return realtime.Verdict{Action: realtime.Answer, Reply: phoneRefusalEvent(msg, typ, why)}
	}
	l.mu.Lock()
	if !l.open {
		l.open = true
		for _, ev := range l.unsent {
			_ = l.r.Send(realtime.LegProvider, ev)
		}
		l.unsent = nil
	}
	over := l.bytes+len(msg) > maxReadAhead
	if !over && l.ended == "" {
		l.queue = append(l.queue, msg)
		l.bytes += len(msg)
	}
	l.mu.Unlock()
	if over {
		l.s.log.Warn("voice relay: the holder fell behind the provider's events; ending the call", "session_id", l.id)
		l.end(ReasonError)
	}
	l.signal()
	return realtime.Verdict{Action: realtime.Forward}
}

// onEvent hears what happens to the legs. Either leg failing ends the
// call: the phone closing its connection or its channel is the app
// leaving; anything else (ICE failed on either leg, the provider leg or
// channel gone) is an error. A silent leg is left to ICE: a phone gone
// for good fails its consent checks.
func (l *relayLink) onEvent(ev realtime.RelayEvent) {
	l.s.relays.events.WithLabelValues(string(ev.Kind), ev.Leg.String()).Inc()
	switch ev.Kind {
	case realtime.EventLegClosed, realtime.EventChannelClosed:
		why := ReasonError
		if ev.Leg == realtime.LegPhone && ev.Detail != "failed" {
			why = ReasonAppClosed
		}
		l.end(why)
	}
}
