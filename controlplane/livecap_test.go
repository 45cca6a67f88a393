package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// A short plan on a live session: two notices as session-wide trusted
// instructions, then session.close at the reservation; the session ends
// with end_reason quota, charged exactly the reservation. The holders'
// clock is the test's, moved to each instant the holder waits for.
func TestLiveCapWarnsTwiceAndCloses(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	clock := testkit.NewClock(time.Now())
	f := newFixture(t, options{registry: reg, quotaFn: shortPlan, clock: clock, backend: "gpt-4.1-mini",
		simCfg: liveSim(sim.Live{UsageInterval: time.Second})})
	p := newUser(t, "short")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, _, liveID := liveCall(t, ctx, f, p)
	if start.MaxDurationS != 10 {
		t.Fatalf("max_duration_s %d, want the short plan's 10", start.MaxDurationS)
	}
	for notice := 1; notice <= 2; notice++ {
		clock.Set(clock.Next(t, ctx))
		testkit.Eventually(t, ctx, "a notice applied", func() bool {
			st, _ := f.sim.LiveSession(liveID)
			return len(appended(st, "session.instructions.append")) == notice
		})
	}
	st, _ := f.sim.LiveSession(liveID)
	for _, a := range appended(st, "session.instructions.append") {
		if a.DelegationID != nil || a.Path != "sideband" {
			t.Fatalf("notice %+v: want session-wide, from the sideband", a)
		}
	}
	clock.Set(clock.Next(t, ctx)) // the reservation's end
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	if *ended.EndReason != controlplane.ReasonQuota || *ended.ChargedS != 10 {
		t.Fatalf("ended %s charged %d s; want quota, 10 s", *ended.EndReason, *ended.ChargedS)
	}
	testkit.Eventually(t, ctx, "the sim's session closed", func() bool {
		st, _ = f.sim.LiveSession(liveID)
		return st.Status == "closed"
	})
	if st.CloseReason != "close_requested" {
		t.Fatalf("closed %q; want close_requested", st.CloseReason)
	}
	if n := sumMetric(t, reg, "voxgate_voice_sideband_cap_notices_total"); n != 2 {
		t.Fatalf("%v notices, want 2", n)
	}
}
