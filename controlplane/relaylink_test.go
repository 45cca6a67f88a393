package controlplane

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/realtime"
)

// What ends a relayed call, and why: the phone closing is the app leaving;
// ICE failing on either leg, or the provider's leg or channel going, is an
// error; the first reason stands, and the events read ahead are read
// before it.
func TestRelayLinkEndReasons(t *testing.T) {
	for _, tc := range []struct {
		ev   realtime.RelayEvent
		want string
	}{
		{realtime.RelayEvent{Kind: realtime.EventLegClosed, Leg: realtime.LegPhone, Detail: "closed"}, ReasonAppClosed},
		{realtime.RelayEvent{Kind: realtime.EventChannelClosed, Leg: realtime.LegPhone}, ReasonAppClosed},
		{realtime.RelayEvent{Kind: realtime.EventLegClosed, Leg: realtime.LegPhone, Detail: "failed"}, ReasonError},
		{realtime.RelayEvent{Kind: realtime.EventLegClosed, Leg: realtime.LegProvider, Detail: "failed"}, ReasonError},
		{realtime.RelayEvent{Kind: realtime.EventLegClosed, Leg: realtime.LegProvider, Detail: "closed"}, ReasonError},
		{realtime.RelayEvent{Kind: realtime.EventChannelClosed, Leg: realtime.LegProvider}, ReasonError},
	} {
		s := &Service{}
		if err := s.relays.register(prometheus.NewRegistry()); err != nil {
			t.Fatal(err)
		}
		l := newRelayLink(s, "vs_test")
		l.open = true // no relay to flush to
		l.mu.Lock()
		l.queue = [][]byte{[]byte(`{"type":"response.done"}`)}
		l.mu.Unlock()
		l.onEvent(tc.ev)
		l.onEvent(realtime.RelayEvent{Kind: realtime.EventLegClosed, Leg: realtime.LegProvider, Detail: "failed"})
		if ev, err := l.Read(); err != nil || string(ev) != `{"type":"response.done"}` {
			t.Fatalf("%+v: read %s, %v; want the event read ahead", tc.ev, ev, err)
		}
		_, err := l.Read()
		if got := relayEndReason(err); got != tc.want {
			t.Errorf("%+v: ended %q (%v), want %q", tc.ev, got, err, tc.want)
		}
	}
}
