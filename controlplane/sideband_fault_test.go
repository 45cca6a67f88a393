package controlplane_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The provider refusing the call: 429 and 500 come back normalized with
// the seconds to wait, and the offer is freed, so the app's retry places
// the call.
func TestSidebandCallRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		fault  sim.Fault
		status int
		code   string
		retry  int
	}{
		{sim.Fault{Endpoint: sim.EndpointRealtimeCalls, Kind: sim.FaultRateLimit, Count: 1, RetryAfter: 7}, 429, "AI_RATE_LIMITED", 7},
		{sim.Fault{Endpoint: sim.EndpointRealtimeCalls, Kind: sim.FaultServerError, Count: 1}, 503, "AI_UNAVAILABLE", 1},
	} {
		p := newUser(t, "pro")
		start := mustStart(t, f, p, `{"mode":"sideband"}`)
		phone := simtest.NewCaller(t)
		offer, err := phone.Offer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.sim.AddFault(tc.fault); err != nil {
			t.Fatal(err)
		}
		w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
		e := decode[errorBody](t, w)
		if w.Code != tc.status || e.Error.Code != tc.code || e.Error.RetryAfterS != tc.retry {
			t.Fatalf("%s: %d %s, want %d %s retry %d", tc.fault.Kind, w.Code, w.Body, tc.status, tc.code, tc.retry)
		}
		if w := postOffer(t, f, p, start.SessionID, "application/sdp", offer); w.Code != http.StatusCreated {
			t.Fatalf("%s: the retry: %d %s", tc.fault.Kind, w.Code, w.Body)
		}
		call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID)
	}
}

// The first attaches find no call (as reported right after a call is
// created) and the first socket is cut: the gateway retries, re-attaches,
// and the tool call after it is answered once.
func TestSidebandReattaches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{simCfg: sim.Config{Script: phoneScript(), Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50},
		Faults: []sim.Fault{
			{Endpoint: sim.EndpointRealtime, Kind: sim.FaultSidebandNotFound, Count: 3},
			{Endpoint: sim.EndpointRealtime, Kind: sim.FaultSidebandDrop, Count: 1, AfterChunks: 1},
		}}})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, callID := sidebandCall(t, ctx, f, p)
	waitHeld(t, ctx, f, callID, 2)
	talkToolTurn(t, ctx, phone)
	if st, _ := f.sim.Call(callID); st.ToolCalls != 1 || st.ToolOutputs[sim.PathSideband] != 1 || st.Responses != 2 {
		t.Fatalf("sim %+v: want the call answered once after the re-attach", st)
	}
	for _, fl := range f.sim.Faults() {
		if fl.Count != 0 && fl.Served != fl.Count {
			t.Fatalf("fault %s served %d of %d", fl.Kind, fl.Served, fl.Count)
		}
	}
	if s := decode[controlplane.Session](t, call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID)); s.Cost == nil || s.Cost.Tokens.AudioOut == 0 {
		t.Fatalf("record: %+v", s.Cost)
	}
}

// Hangup failing: the gateway retries it, and the session ends either way.
func TestSidebandHangupRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, _, callID := sidebandCall(t, ctx, f, p)
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointRealtimeHangup, Kind: sim.FaultServerError, Count: 2}); err != nil {
		t.Fatal(err)
	}
	w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"reason":"app_closed"}`), start.SessionID)
	if w.Code != 200 || *decode[controlplane.Session](t, w).EndReason != controlplane.ReasonAppClosed {
		t.Fatalf("end: %d %s", w.Code, w.Body)
	}
	if st, _ := f.sim.Call(callID); st.Status != "ended" || st.EndReason != "hangup" {
		t.Fatalf("the call: %+v; want hung up on the third try", st)
	}
}

// A function call is run and answered once whichever of its two done
// events names it, and when both do; one whose item was cut short, or
// whose response did not complete, never runs. A response's outputs go
// out after its response.done, followed by one response.create.
func TestSidebandCallEventsAnsweredOnce(t *testing.T) {
	t.Parallel()
	fake, url := newFakeCalls(t)
	s, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{sim: s, simURL: url})
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{"mode":"sideband"}`)
	if w := postOffer(t, f, p, start.SessionID, "application/sdp", minimalOffer); w.Code != 201 {
		t.Fatalf("offer: %d %s", w.Code, w.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	callID := fmt.Sprintf("rtc_bench%08d", fake.n.Load())
	testkit.Eventually(t, ctx, "the attach", func() bool { fake.mu.Lock(); defer fake.mu.Unlock(); return fake.socks[callID] != nil })
	item := func(resp, id, status string) []byte {
		return []byte(`{"type":"response.output_item.done","response_id":"` + resp + `","item":{"type":"function_call","status":"` + status +
			`","call_id":"` + id + `","name":"echo","arguments":"{\"q\":\"x\"}"}}`)
	}
	args := func(resp, id string) []byte {
		return []byte(`{"type":"response.function_call_arguments.done","response_id":"` + resp + `","call_id":"` + id +
			`","name":"echo","arguments":"{\"q\":\"x\"}"}`)
	}
	done := func(resp, status string) []byte {
		return []byte(`{"type":"response.done","response":{"id":"` + resp + `","status":"` + status + `"}}`)
	}
	answered := func(what string, outputs map[string]int, creates int) {
		t.Helper()
		testkit.Eventually(t, ctx, what, func() bool {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			for id, n := range outputs {
				if fake.outputs[id] != n {
					return false
				}
			}
			return fake.creates == creates
		})
	}
	for _, ev := range [][]byte{item("r1", "only_item", "completed"), args("r1", "both"), item("r1", "both", "completed"),
		args("r1", "both"), args("r1", "args_only"), args("r1", "cut"), item("r1", "cut", "incomplete")} {
		fake.send(callID, ev)
	}
	fake.send(callID, done("r1", "completed"))
	answered("r1's outputs", map[string]int{"only_item": 1, "both": 1, "args_only": 1}, 1)
	// A cancelled response's call never runs; the next response's does.
	for _, ev := range [][]byte{args("r2", "cancelled"), done("r2", "cancelled"), item("r3", "after", "completed"), done("r3", "completed")} {
		fake.send(callID, ev)
	}
	answered("r3's output", map[string]int{"after": 1}, 2)
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.outputs["only_item"] != 1 || fake.outputs["both"] != 1 || fake.outputs["cut"] != 0 || fake.outputs["cancelled"] != 0 {
		t.Fatalf("outputs %v, %d response.create; want one each for the completed calls, none for the cut ones", fake.outputs, fake.creates)
	}
}
