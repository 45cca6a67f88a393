package realtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A call placed with the server key and the session config: the answer
// completes the phone's peer, the call id comes from Location, the
// sideband attaches (after call_id_not_found twice) and sees the session
// the gateway chose, and hangup ends the call, then finds it gone.
func TestCallAttachHangup(t *testing.T) {
	t.Parallel()
	s, c := newClient(t, sim.Config{Latency: simtest.ZeroLatency()}, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CreateCall(ctx, offer, session())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(call.ID, "rtc_") || !strings.HasPrefix(call.Answer, "v=0") {
		t.Fatalf("call %q, answer %.20q", call.ID, call.Answer)
	}
	if err := phone.Accept(call.Answer); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Attach(ctx, "rtc_u1_nosuchcall0000000000000"); !errors.Is(err, realtime.ErrCallNotFound) {
		t.Fatalf("attach to an unknown call: %v", err)
	}
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointRealtime, Kind: sim.FaultSidebandNotFound, Count: 2}); err != nil {
		t.Fatal(err)
	}
	attachCtx, opened := context.WithCancel(ctx)
	sb, err := c.AttachRetry(attachCtx, call.ID, 3*time.Second)
	opened() // the socket outlives the context that opened it
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// A sideband is promised no session.created: the first event it reads
	// answers the config it sends.
	update, err := session().UpdateEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Send(update); err != nil {
		t.Fatal(err)
	}
	first, err := sb.Read()
	if err != nil {
		t.Fatal(err)
	}
	var updated struct {
		Type    string `json:"type"`
		Session struct {
			Instructions string `json:"instructions"`
		} `json:"session"`
	}
	if err := json.Unmarshal(first, &updated); err != nil || updated.Type != "session.updated" || updated.Session.Instructions != session().Instructions {
		t.Fatalf("first sideband event %s, want the session.updated of its config", first)
	}
	if err := c.Hangup(ctx, call.ID); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := sb.Read(); err != nil {
			if realtime.CloseCode(err) != 1000 {
				t.Fatalf("sideband ended with %v, want a normal close", err)
			}
			break
		}
	}
	if err := c.Hangup(ctx, call.ID); !errors.Is(err, realtime.ErrCallNotFound) {
		t.Fatalf("second hangup: %v", err)
	}
}
