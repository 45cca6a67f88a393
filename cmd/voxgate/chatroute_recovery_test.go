package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// TestChatRoutePrimaryDownThenHealthy: through POST /v1/chat, the primary
// is down for the first 60 s of 20 turns, 5 s apart on the breakers'
// clock (Main.RouterNow). The fallback answers each of them meanwhile;
// three failures open the primary's breaker and it sees no request while
// open; a minute after opening, one probe finds it healthy, closes the
// breaker, and every later turn is the primary's again: back within 5 s
// of its recovery (the bar is 30 s), one probe per open window.
func TestChatRoutePrimaryDownThenHealthy(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	g := startGatewayWith(t, nil, nil, func(m *Main) { m.RouterNow = clock.Now })
	g.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
	p, f := "1 primary/"+primaryModel, "1 fallback/"+fallbackModel
	start := clock.Now()
	for i := range 20 {
		at := time.Duration(i) * 5 * time.Second
		clock.Set(start.Add(at))
		if at == 60*time.Second {
			g.primary.sim.ClearFaults()
		}
		user := fmt.Sprintf("u-outage-%d", i)
		r := g.chat(t, user, `{"message":"hello","stream":false}`)
		if r.Status != 200 || r.Body["degraded"] != false || r.Body["message"] == "" {
			t.Fatalf("turn %d at %s: %d %s, want an answer", i, at, r.Status, r.Raw)
		}
		var want []string
		answeredBy, state := "fallback", "open"
		switch {
		case at == 0: // two failures: the try and its retry
			want, state = []string{p + ":PROVIDER_UNAVAILABLE", p + ":PROVIDER_UNAVAILABLE", f + ":success"}, "closed"
		case at == 5*time.Second: // the third opens it; the retry finds it open
			want = []string{p + ":PROVIDER_UNAVAILABLE", p + ":circuit_open", f + ":success"}
		case at < 65*time.Second: // open: the primary is not asked
			want = []string{p + ":circuit_open", f + ":success"}
		default: // a minute after opening: the probe, healthy, closes it
			want, answeredBy, state = []string{p + ":success"}, "primary", "closed"
		}
		trace, provider, _, status := g.audit(t, user)
		if !slices.Equal(trace, want) || provider != answeredBy || status != "success" {
			t.Errorf("turn %d at %s: trace %q by %q (%s), want %q by %s", i, at, trace, provider, status, want, answeredBy)
		}
		recs := g.records(t, user)
		if len(recs) != 1 || recs[0].Kind != "chat" || recs[0].Provider != answeredBy || recs[0].UsageSource != "provider_reported" {
			t.Errorf("turn %d at %s: records %+v, want one chat record by %s, as reported (failed attempts not billed)", i, at, recs, answeredBy)
		}
		wantHits := min(3, 2+i) // 2, then 3 until the probe
		if at >= 65*time.Second {
			wantHits = 3 + int((at-60*time.Second)/(5*time.Second))
		}
		if n := g.primary.count(); n != wantHits {
			t.Errorf("turn %d at %s: the primary saw %d requests, want %d", i, at, n, wantHits)
		}
		if st := g.breakers(t)[0]; st.State != state {
			t.Errorf("turn %d at %s: the primary's breaker %s (%s), want %s", i, at, st.State, st.Reason, state)
		}
	}
	if n := g.fallback.count(); n != 13 {
		t.Errorf("the fallback saw %d requests, want the 13 of the outage", n)
	}
}
