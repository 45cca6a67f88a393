package realtime_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/realtime"
)

var maxMessageSize = regexp.MustCompile(`a=max-message-size:\d+`)

// The oai-events channel through the relay: the interception hook drops a
// phone event (the model never sees it) and answers another itself; an
// event larger than the receiving side takes is refused with an error
// event to the phone, in either direction, and the channel stays open.
func TestRelayDataChannel(t *testing.T) {
	t.Parallel()
	var dropped atomic.Int64
	e := newRelayEnv(t, relayOpts{
		intercept: func(from realtime.Leg, msg []byte) realtime.Verdict {
			var ev struct {
				Type    string `json:"type"`
				Session struct {
					Tools json.RawMessage `json:"tools"`
				} `json:"session"`
			}
			_ = json.Unmarshal(msg, &ev)
			switch {
			case from == realtime.LegPhone && ev.Type == "session.update" && ev.Session.Tools != nil:
				dropped.Add(1)
				return realtime.Verdict{Action: realtime.Drop}
			case from == realtime.LegPhone && ev.Type == "relay.ping":
				return realtime.Verdict{Action: realtime.Answer, Reply: []byte(`{"type":"relay.pong"}`)}
			}
			return realtime.Verdict{Action: realtime.Forward}
		},
		// The provider takes 8 KB messages; the phone 4 KB.
		answer: func(sdp string) string { return maxMessageSize.ReplaceAllString(sdp, "a=max-message-size:8192") },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{maxMessage: 4096})
	e.connect(ctx, t, p, false)
	// The provider's first event, sent as its channel opened, reaches the
	// phone however the two openings fall (held while the phone's is not
	// open yet).
	p.until(ctx, t, "session.created")

	update := func(id, instructions string) map[string]any {
		return map[string]any{"type": "session.update", "event_id": id,
			"session": map[string]any{"type": "realtime", "instructions": instructions}}
	}
	p.sendEvent(t, map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"tools": []any{map[string]any{"type": "function", "name": "steal", "parameters": map[string]any{"type": "object"}}}}})
	p.sendEvent(t, map[string]any{"type": "relay.ping"})
	p.until(ctx, t, "relay.pong")
	p.sendEvent(t, update("evt_small", "Answer briefly."))
	p.until(ctx, t, "session.updated", "Answer briefly.")
	if dropped.Load() != 1 {
		t.Fatalf("the hook dropped %d events, want 1", dropped.Load())
	}
	if call, _ := e.sim.Call(e.relay.CallID()); call.EventsIn != 1 {
		t.Fatalf("the simulator saw %d client events, want only the forwarded update", call.EventsIn)
	}

	// Upstream: 9 KB is more than the provider's 8 KB.
	p.sendEvent(t, update("evt_big", strings.Repeat("x", 9000)))
	refusal := p.until(ctx, t, "error", "event_too_large", `"event_id":"evt_big"`)
	if !strings.Contains(string(refusal.Raw), "8192") {
		t.Fatalf("refusal %s does not name the limit", refusal.Raw)
	}
	e.waitEvent(ctx, t, realtime.EventMessageRefused, realtime.LegPhone)
	// Downstream: 5 KB of instructions pass upstream, but their
	// session.updated is more than the phone's 4 KB.
	p.sendEvent(t, update("evt_mid", strings.Repeat("y", 5000)))
	down := p.until(ctx, t, "error", "event_too_large", `\"session.updated\"`)
	t.Logf("refused both ways: %s; %s", refusal.Raw, down.Raw)
	e.waitEvent(ctx, t, realtime.EventMessageRefused, realtime.LegProvider)
	// Both channels are still open.
	p.sendEvent(t, update("evt_after", "Still here."))
	p.until(ctx, t, "session.updated", "Still here.")
	select {
	case ev := <-e.events:
		if ev.Kind == realtime.EventChannelClosed {
			t.Fatalf("channel closed: %+v", ev)
		}
	default:
	}
	if call, _ := e.sim.Call(e.relay.CallID()); call.EventsIn != 3 {
		t.Fatalf("the simulator saw %d client events, want 3 (the oversized one never sent)", call.EventsIn)
	}
}
