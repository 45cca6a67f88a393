package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The live holder dies (its loop cancelled, no hand-over) and its lease
// runs out: the other replica adopts the session within 5 s, and the next
// delegation is answered once, by the adopter, with the tool run once.
func TestLiveAdoptionAnswersNextDelegation(t *testing.T) {
	t.Parallel()
	var runsA, runsB int64
	cfg := oneTurn(liveScript(), simtest.ZeroLatency())
	a := newFixture(t, options{runs: &runsA, backend: "gpt-4.1-mini", simCfg: cfg})
	b := newFixture(t, options{runs: &runsB, url: a.url, sim: a.sim, simURL: a.simURL, backend: "gpt-4.1-mini"})
	killA := runReplica(t, a.svc)
	runReplica(t, b.svc)
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, phone, liveID := liveCall(t, ctx, a, p)

	killA()
	died := time.Now()
	lapse(t, ctx, b.pool, start.SessionID)
	testkit.Eventually(t, ctx, "b's sideband", func() bool {
		st, _ := a.sim.LiveSession(liveID)
		return st.Sidebands >= 2
	})
	if took := time.Since(died); took > 5*time.Second || b.svc.Held() != 1 {
		t.Fatalf("adopted after %v (b holds %d); want within 5 s", took, b.svc.Held())
	}
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the answer", func() bool {
		st, _ = a.sim.LiveSession(liveID)
		return len(appended(st, "session.commentary.append")) >= 1
	})
	if n := len(appended(st, "session.commentary.append")); n != 1 || runsA != 0 || runsB != 1 {
		t.Fatalf("%d commentaries, echo ran %d on a and %d on b; want 1, 0, 1", n, runsA, runsB)
	}
	ended := decode[controlplane.Session](t, call(t, b.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID))
	if ended.Cost == nil || ended.Cost.Tokens.BackendTextOut == 0 || ended.Cost.Tokens.TranscriptionTextOut != 0 {
		t.Fatalf("record after adoption: %+v", ended.Cost)
	}
}

// Two holders on one session (as during a hand-over) both see the
// delegation: it is claimed once, so the tool runs once and the voice gets
// one answer.
func TestLiveDuplicateDelegationRunsOnce(t *testing.T) {
	t.Parallel()
	var runsA, runsB int64
	cfg := oneTurn(liveScript(), simtest.ZeroLatency())
	a := newFixture(t, options{runs: &runsA, backend: "gpt-4.1-mini", simCfg: cfg})
	b := newFixture(t, options{runs: &runsB, url: a.url, sim: a.sim, simURL: a.simURL, backend: "gpt-4.1-mini"})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, phone, liveID := liveCall(t, ctx, a, p)
	controlplane.HoldForTest(b.svc, start.SessionID, p.UserID)
	testkit.Eventually(t, ctx, "two sidebands", func() bool {
		st, _ := a.sim.LiveSession(liveID)
		return st.Sidebands >= 2
	})
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the answer", func() bool {
		st, _ = a.sim.LiveSession(liveID)
		return len(appended(st, "session.commentary.append")) >= 1
	})
	var claims int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM voice_live_delegations WHERE session_id = $1`, start.SessionID).Scan(&claims); err != nil {
		t.Fatal(err)
	}
	if n := len(appended(st, "session.commentary.append")); n != 1 || runsA+runsB != 1 || claims != 1 || len(st.Delegations) != 1 {
		t.Fatalf("%d commentaries, echo ran %d+%d, %d claims, delegations %v; want one of each", n, runsA, runsB, claims, st.Delegations)
	}
}
