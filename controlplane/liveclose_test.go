package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The provider closes the session for its content: the session ends with
// end_reason safety, charged the sim's billed seconds.
func TestLiveContentCloseEndsSafety(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: oneTurn(liveScript(), simtest.ZeroLatency())})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: sim.FaultContentFilter}); err != nil {
		t.Fatal(err)
	}
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, phone, liveID := liveCall(t, ctx, f, p)
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	st, _ := f.sim.LiveSession(liveID)
	if *ended.EndReason != controlplane.ReasonSafety || st.CloseReason != "content" || ended.Cost == nil ||
		ended.Cost.DurationMS != liveMillis(st) {
		t.Fatalf("ended %s (sim %s), record %+v; want safety at the sim's %d ms", *ended.EndReason, st.CloseReason, ended.Cost, liveMillis(st))
	}
}

// The sideband is cut without a close frame: the holder attaches again
// (counted), the session goes on, and the next delegation is answered.
func TestLiveSidebandDropReattaches(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	f := newFixture(t, options{registry: reg, backend: "gpt-4.1-mini", simCfg: oneTurn(liveScript(), simtest.ZeroLatency())})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultSidebandDrop, AfterChunks: 2, Count: 1}); err != nil {
		t.Fatal(err)
	}
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, phone, liveID := liveCall(t, ctx, f, p)
	testkit.Eventually(t, ctx, "a second sideband", func() bool {
		st, _ := f.sim.LiveSession(liveID)
		return st.Sidebands >= 2
	})
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ctx, "the answer after the re-attach", func() bool {
		st, _ := f.sim.LiveSession(liveID)
		return len(appended(st, "session.commentary.append")) == 1
	})
	if n := sumMetric(t, reg, "voxgate_voice_live_reattaches_total"); n != 1 {
		t.Fatalf("%v re-attaches; want 1", n)
	}
	if s := decode[controlplane.Session](t, call(t, f.svc.HandleGet, p, "GET", "/", nil, start.SessionID)); !s.Active() {
		t.Fatalf("the session ended: %+v", s)
	}
}

// The phone hangs up (its peer closes): the provider closes the session
// remote_hangup, and it ends app_closed with the sim's billed seconds.
func TestLivePhoneHangupEndsAppClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: liveSim(sim.Live{UsageInterval: time.Second})})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, phone, liveID := liveCall(t, ctx, f, p)
	testkit.Eventually(t, ctx, "some usage", func() bool {
		st, _ := f.sim.LiveSession(liveID)
		return st.UsageSeconds > 0
	})
	phone.Close()
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	st, _ := f.sim.LiveSession(liveID)
	if *ended.EndReason != controlplane.ReasonAppClosed || st.CloseReason != "remote_hangup" || ended.Cost == nil ||
		ended.Cost.DurationMS != liveMillis(st) || *ended.Cost.CostMicros != priceLive(liveMillis(st)) {
		t.Fatalf("ended %s (sim %s), record %+v; want app_closed at the sim's %d ms", *ended.EndReason, st.CloseReason, ended.Cost, liveMillis(st))
	}
}

// The sideband dies just before session.closed: the record holds the
// highest usage the gateway saw (the sim's last usage update, past the
// start charge), marked unconfirmed.
func TestLiveUsageUnconfirmedWhenClosedUnseen(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: liveSim(sim.Live{UsageInterval: time.Second})})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultSidebandCutAtClose}); err != nil {
		t.Fatal(err)
	}
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, _, liveID := liveCall(t, ctx, f, p)
	testkit.Eventually(t, ctx, "usage past the start charge", func() bool {
		st, _ := f.sim.LiveSession(liveID)
		return st.UpdatedSeconds > 16
	})
	ended, st := endLive(t, ctx, f, p, start.SessionID, liveID)
	seen, final := int64(st.UpdatedSeconds*1000+0.5), liveMillis(st)
	rec := ended.Cost
	// The final is usually past the last update; it equals it when the
	// close falls in the same session-clock step as an update (the clock
	// runs 20× here), and then the source alone tells the record did not
	// come from session.closed.
	if rec == nil || rec.UsageSource != "unconfirmed" || rec.DurationMS != seen || seen > final ||
		rec.CostMicros == nil || *rec.CostMicros != priceLive(seen) {
		t.Fatalf("record %+v; want unconfirmed at the last update's %d ms (the unseen final was %d ms)", rec, seen, final)
	}
}

// The provider's lifetime runs out (2 h in the API, 40 s of the sim's
// clock here): session.closed reason expired ends the session
// upstream_expired, billed to the close, the final usage confirmed.
func TestLiveExpiryEndsUpstreamExpired(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: liveSim(sim.Live{MaxSession: 40 * time.Second, UsageInterval: time.Second})})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, _, liveID := liveCall(t, ctx, f, p)
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the sim's session closed", func() bool {
		st, _ = f.sim.LiveSession(liveID)
		return st.Status == "closed" // its stats settle after session.closed went out
	})
	rec := ended.Cost
	if *ended.EndReason != controlplane.ReasonUpstreamExpired || st.CloseReason != "expired" || rec == nil ||
		rec.UsageSource != "server_observed" || rec.DurationMS != liveMillis(st) || rec.DurationMS <= 15_000 ||
		rec.CostMicros == nil || *rec.CostMicros != priceLive(rec.DurationMS) {
		t.Fatalf("ended %s (sim %s, %v s), record %+v; want upstream_expired billed to the close", *ended.EndReason, st.CloseReason, st.UsageSeconds, rec)
	}
}

// The provider sends a stale usage report, half the figure, after a real
// one, and the sideband is cut before session.closed: the record holds the
// largest cumulative figure seen, never the last one read.
func TestLiveUsageKeepsLargest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: liveSim(sim.Live{UsageInterval: time.Minute})})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultSidebandCutAtClose}); err != nil {
		t.Fatal(err)
	}
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, _, liveID := liveCall(t, ctx, f, p)
	testkit.Eventually(t, ctx, "usage past the start charge", func() bool {
		st, _ := f.sim.LiveSession(liveID)
		return st.UpdatedSeconds > 0 // a minute of the sim's clock, 3 s of real time
	})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: sim.FaultUsageRegress, Count: 1}); err != nil {
		t.Fatal(err)
	}
	// The stale report follows the next real one; the one after that is
	// 3 s away, so the stale one is the last the holder reads.
	testkit.Eventually(t, ctx, "the stale report sent", func() bool {
		for _, fl := range f.sim.Faults() {
			if fl.Kind == sim.FaultUsageRegress {
				return false
			}
		}
		return true
	})
	w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"reason":"user_hangup"}`), start.SessionID)
	if w.Code != 200 {
		t.Fatalf("end: %d %s", w.Code, w.Body)
	}
	rec := decode[controlplane.Session](t, w).Cost
	st, _ := f.sim.LiveSession(liveID)
	// The sim's stats keep the real reports: the last of them is the
	// largest, twice the stale one read after it.
	if want := int64(st.UpdatedSeconds*1000 + 0.5); rec == nil || rec.UsageSource != "unconfirmed" || rec.DurationMS != want {
		t.Fatalf("record %+v; want the largest figure seen, %d ms", rec, want)
	}
}
