package realtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The provider goes away after answering, before the provider leg
// connects: nothing answers the relay's ICE checks. The leg is reported
// closed once at its connect deadline, not when ICE gives up checking
// (30 s), so the session it carries ends promptly.
func TestRelayProviderGoneBeforeConnect(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var e *relayEnv
	e = newRelayEnv(t, relayOpts{connect: time.Second, dialed: func(call realtime.Call) {
		// The simulator ends the call and closes its peer before the relay
		// has applied its answer.
		if err := e.client.Hangup(ctx, call.ID); err != nil {
			t.Error(err)
		}
	}})
	p := newPhone(t, phoneOpts{})
	began := time.Now()
	answer, err := e.relay.Answer(ctx, p.offer(t))
	if err != nil {
		t.Fatal(err)
	}
	p.accept(t, answer, false)
	ev := e.waitEvent(ctx, t, realtime.EventLegClosed, realtime.LegProvider)
	if took := time.Since(began); ev.Detail != realtime.DetailConnectTimeout || took > 5*time.Second {
		t.Fatalf("provider leg closed (%s) %v after the answer; want %s after the 1 s deadline", ev.Detail, took, realtime.DetailConnectTimeout)
	}
	// Reported once: its own close that follows is not another event.
	e.relay.Close()
	select {
	case ev := <-e.events:
		if ev.Leg == realtime.LegProvider && ev.Kind == realtime.EventLegClosed {
			t.Fatalf("a second leg_closed for the provider: %+v", ev)
		}
	default:
	}
}

// A connected provider leg is left alone by its connect deadline.
func TestRelayConnectDeadlineSparesConnectedLeg(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{connect: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{})
	e.connect(ctx, t, p, false)
	go p.stream(ctx)
	p.waitHeard(ctx, t, 50) // a second of audio: well past the deadline
	noLegClosed(t, e)
}

// noLegClosed fails if a leg_closed event is waiting.
func noLegClosed(t *testing.T, e *relayEnv) {
	t.Helper()
	for {
		select {
		case ev := <-e.events:
			if ev.Kind == realtime.EventLegClosed {
				t.Fatalf("leg_closed: %+v", ev)
			}
			continue
		default:
		}
		return
	}
}

// The phone's network vanishes mid-call (no DTLS close: its packets just
// stop both ways). The relay's consent checks go unanswered and ICE fails
// the phone leg, reported once as leg_closed "failed"; the provider leg
// is not reported closed by it.
func TestRelayPhoneNetworkVanishes(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{net: realtime.NetworkParams{DisconnectedTimeout: time.Second, FailedTimeout: time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := simtest.NewCutConn(t)
	p := newPhone(t, phoneOpts{conn: conn})
	e.connect(ctx, t, p, false)
	streamCtx, stop := context.WithCancel(ctx)
	defer stop()
	go p.stream(streamCtx)
	p.waitHeard(ctx, t, 25)
	conn.Cut()
	cut := time.Now()
	ev := e.waitEvent(ctx, t, realtime.EventLegClosed, realtime.LegPhone)
	if took := time.Since(cut); ev.Detail != "failed" || took < time.Second || took > 10*time.Second {
		t.Fatalf("phone leg %s %v after the cut; want failed after the 1 s + 1 s timeouts", ev.Detail, took)
	}
	noLegClosed(t, e)
}
