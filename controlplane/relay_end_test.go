package controlplane_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// phoneGone waits until the phone's connection to the relay is down.
func phoneGone(t *testing.T, ctx context.Context, phone *simtest.Caller) {
	t.Helper()
	testkit.Eventually(t, ctx, "the phone's connection to close", func() bool {
		s := phone.PC.ConnectionState()
		return s == webrtc.PeerConnectionStateClosed || s == webrtc.PeerConnectionStateFailed || s == webrtc.PeerConnectionStateDisconnected
	})
}

// A short plan on a relayed call: two notices spoken over the relayed
// channel, then at the reservation the gateway hangs up the provider's
// call and closes the phone's leg, and the session ends quota, charged
// the reservation, once.
func TestRelayCapClosesBothLegs(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	clock := testkit.NewClock(time.Now())
	f := newFixture(t, options{relay: true, registry: reg, quotaFn: shortPlan, clock: clock,
		simCfg: sim.Config{Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	p := newUser(t, "short")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, _, callID := relayCall(t, ctx, f, p)
	for notice := range 2 {
		clock.Set(clock.Next(t, ctx))
		if _, _, err := simtest.Until(ctx, phone, "response.done"); err != nil {
			t.Fatalf("notice %d: %v", notice+1, err)
		}
	}
	clock.Set(clock.Next(t, ctx)) // the reservation's end
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	if *ended.EndReason != controlplane.ReasonQuota || *ended.ChargedS != 10 {
		t.Fatalf("ended %s charged %d s; want quota, 10 s", *ended.EndReason, *ended.ChargedS)
	}
	if st, _ := f.sim.Call(callID); st.Status != "ended" || st.EndReason != "hangup" || st.Responses != 2 {
		t.Fatalf("the call: %+v; want hung up after two spoken notices", st)
	}
	phoneGone(t, ctx, phone)
	testkit.Eventually(t, ctx, "the relay to close", func() bool { return f.svc.Relayed() == 0 && f.svc.Held() == 0 })
	if n := sumMetric(t, reg, "voxgate_voice_sessions_ended_total"); n != 1 {
		t.Fatalf("%v ends, want 1", n)
	}
}

// Either leg going ends the session once: the phone closing its peer is
// the app leaving; the provider's leg going (the sim ends the call) is an
// error, and the phone's leg is closed too.
func TestRelayLegEndsSession(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cut    func(t *testing.T, f fixture, phone *simtest.Caller, callID string)
		reason string
	}{
		{"phone", func(t *testing.T, _ fixture, phone *simtest.Caller, _ string) { phone.Close() }, controlplane.ReasonAppClosed},
		{"provider", func(t *testing.T, f fixture, _ *simtest.Caller, callID string) {
			req, _ := http.NewRequest("POST", f.simURL+"/v1/realtime/calls/"+callID+"/hangup", nil)
			req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("sim hangup: %d", res.StatusCode)
			}
		}, controlplane.ReasonError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			f := newFixture(t, options{relay: true, registry: reg})
			p := newUser(t, "pro")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start, phone, _, callID := relayCall(t, ctx, f, p)
			tc.cut(t, f, phone, callID)
			ended := waitEnded(t, ctx, f, p, start.SessionID)
			if *ended.EndReason != tc.reason || *ended.ChargedS > 5 || ended.Cost == nil {
				t.Fatalf("ended %s charged %d s, record %+v; want %s, a few seconds, a record", *ended.EndReason, *ended.ChargedS, ended.Cost, tc.reason)
			}
			phoneGone(t, ctx, phone)
			testkit.Eventually(t, ctx, "the relay to close", func() bool { return f.svc.Relayed() == 0 && f.svc.Held() == 0 })
			if st, _ := f.sim.Call(callID); st.Status != "ended" {
				t.Fatalf("the provider's call is still up: %+v", st)
			}
			if n := sumMetric(t, reg, "voxgate_voice_sessions_ended_total"); n != 1 {
				t.Fatalf("%v ends, want 1", n)
			}
		})
	}
}

// A relayed call cannot be adopted: its media runs through its replica.
// When that replica's lease lapses, the sweeper of another ends the
// session with error and hangs up the provider's call.
func TestRelayDeadReplicaSwept(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{relay: true})
	other := f.replica(t)
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, _, callID := relayCall(t, ctx, f, p)
	if n, err := other.svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("sweep with the replica alive: %d, %v", n, err)
	}
	if _, err := f.pool.Exec(ctx, `UPDATE voice_replicas SET lease_until = now() - interval '1 second'
		WHERE id = (SELECT holder FROM voice_sessions WHERE id = $1)`, start.SessionID); err != nil {
		t.Fatal(err)
	}
	if n, err := other.svc.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep after the lease lapsed: %d, %v; want 1", n, err)
	}
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	if *ended.EndReason != controlplane.ReasonError {
		t.Fatalf("ended %s, want error", *ended.EndReason)
	}
	if st, _ := f.sim.Call(callID); st.Status != "ended" {
		t.Fatalf("the provider's call is still up: %+v", st)
	}
	phoneGone(t, ctx, phone) // the (live) replica let its relay go
}

// A gateway without a relay network refuses relay mode with 400.
func TestRelayNotConfigured(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	w := call(t, f.svc.HandleStart, newUser(t, "pro"), "POST", "/v1/voice/sessions", []byte(`{"mode":"relay"}`), "")
	if w.Code != http.StatusBadRequest {
		t.Fatalf("relay start without a relay network: %d %s", w.Code, w.Body)
	}
}

// A replica that stops ends its relayed calls (their media goes with it)
// rather than handing them over: error, the provider's call hung up, the
// phone's leg closed, at once.
func TestRelayEndedOnClose(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{relay: true})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, _, callID := relayCall(t, ctx, f, p)
	f.svc.Close()
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	if *ended.EndReason != controlplane.ReasonError || ended.Cost == nil {
		t.Fatalf("ended %s, record %+v; want error with a record", *ended.EndReason, ended.Cost)
	}
	if st, _ := f.sim.Call(callID); st.Status != "ended" || st.EndReason != "hangup" {
		t.Fatalf("the provider's call: %+v", st)
	}
	phoneGone(t, ctx, phone)
}
