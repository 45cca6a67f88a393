package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// runReplica runs svc's lease, adoption and sweeper loop until the
// returned cancel, which waits for it to stop.
func runReplica(t *testing.T, svc *controlplane.Service) (kill func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	kill = func() { cancel(); <-done }
	t.Cleanup(kill)
	return kill
}

// waitUpkeep waits until the one replica other than session id's holder
// has run a whole lease upkeep (renewal, then adoption scan) that began
// after now: an upkeep renews first, so a renewal seen after now starts
// such an upkeep, and the next renewal shows it finished.
func waitUpkeep(t *testing.T, ctx context.Context, pool *pgxpool.Pool, id string) {
	t.Helper()
	renewed := func() (n int64) {
		err := pool.QueryRow(ctx, `SELECT coalesce(max(extract(epoch FROM r.lease_until) * 1e6)::bigint, 0) FROM voice_replicas r
			WHERE r.id IS DISTINCT FROM (SELECT holder FROM voice_sessions WHERE id = $1)`, id).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, last := 0, renewed(); i < 2; i++ {
		testkit.Eventually(t, ctx, "the other replica's lease upkeep", func() bool {
			n := renewed()
			if n == last {
				return false
			}
			last = n
			return true
		})
	}
}

// lapse ends the lease of session id's holder on the database's clock, as
// the lease's TTL would once the holder stopped renewing it.
func lapse(t *testing.T, ctx context.Context, pool *pgxpool.Pool, id string) {
	t.Helper()
	if _, err := pool.Exec(ctx, `UPDATE voice_replicas SET lease_until = now()
		WHERE id = (SELECT holder FROM voice_sessions WHERE id = $1)`, id); err != nil {
		t.Fatal(err)
	}
}

// talkToolTurn makes the phone say pasta and waits for both responses:
// the scripted function call and the answer after its output.
func talkToolTurn(t *testing.T, ctx context.Context, phone *simtest.Caller) {
	t.Helper()
	if err := phone.SendAudio(ctx, 75, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := untilResponses(ctx, phone, 2); err != nil {
		t.Fatal(err)
	}
}

// Two replicas: the holder dies mid-call (its loop cancelled, no hand-over)
// and its lease runs out (on the database's clock, moved on instead of
// waiting out the TTL), the other adopts the call within 5 s, and the next scripted tool call is
// run and answered exactly once, by the adopter.
func TestSidebandAdoption(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	a := newFixture(t, options{simCfg: sim.Config{Script: phoneScript(), Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	b := newFixture(t, options{url: a.url, sim: a.sim, simURL: a.simURL, registry: reg})
	killA := runReplica(t, a.svc)
	runReplica(t, b.svc)
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, callID := sidebandCall(t, ctx, a, p)
	if a.svc.Held() != 1 || b.svc.Held() != 0 {
		t.Fatalf("held: a %d, b %d; want the call on a", a.svc.Held(), b.svc.Held())
	}
	waitUpkeep(t, ctx, b.pool, start.SessionID) // a's lease is live: b leaves the call alone
	if b.svc.Held() != 0 {
		t.Fatal("b took a call whose holder is alive")
	}

	killA()
	died := time.Now()
	lapse(t, ctx, b.pool, start.SessionID)
	waitHeld(t, ctx, a, callID, 2)
	if took := time.Since(died); took > 5*time.Second || b.svc.Held() != 1 {
		t.Fatalf("adopted after %v (b holds %d); want within 5 s", took, b.svc.Held())
	} else {
		t.Logf("adopted %v after the holder died", took)
	}

	talkToolTurn(t, ctx, phone)
	st, _ := a.sim.Call(callID)
	if st.ToolCalls != 1 || st.ToolOutputs[sim.PathSideband] != 1 || st.Responses != 2 {
		t.Fatalf("sim %+v: want the call answered once over the sideband", st)
	}
	if n := sumMetric(t, reg, "voxgate_voice_sideband_adoptions_total"); n != 1 {
		t.Fatalf("b adopted %v calls, want 1", n)
	}
	ended := decode[controlplane.Session](t, call(t, b.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID))
	if ended.Cost == nil || ended.Cost.UsageSource != billing.SourceServerObserved || ended.Cost.Tokens.AudioOut == 0 {
		t.Fatalf("record after adoption: %+v", ended.Cost)
	}
}

// A draining holder (Close, as on SIGTERM) hands its call over: Close
// returns once the other replica holds it, with no moment unheld, and the
// next tool call is answered once.
func TestSidebandHandOver(t *testing.T) {
	t.Parallel()
	a := newFixture(t, options{simCfg: sim.Config{Script: phoneScript(), Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	b := newFixture(t, options{url: a.url, sim: a.sim, simURL: a.simURL})
	runReplica(t, a.svc)
	runReplica(t, b.svc)
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, callID := sidebandCall(t, ctx, a, p)

	began := time.Now()
	a.svc.Close()
	if b.svc.Held() != 1 || a.svc.Held() != 0 {
		t.Fatalf("after the hand-over a holds %d, b %d", a.svc.Held(), b.svc.Held())
	}
	// Close returned once b's socket was on: both were attached at once.
	if st, _ := a.sim.Call(callID); st.Sidebands != 2 || st.Status != "active" {
		t.Fatalf("sim %+v: want the call up with b's sideband", st)
	}
	t.Logf("handed over in %v", time.Since(began))

	talkToolTurn(t, ctx, phone)
	if st, _ := a.sim.Call(callID); st.ToolCalls != 1 || st.ToolOutputs[sim.PathSideband] != 1 || st.Responses != 2 {
		t.Fatalf("sim %+v: want the call answered once over the sideband", st)
	}
	if s := decode[controlplane.Session](t, call(t, b.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID)); s.Cost == nil {
		t.Fatalf("no record: %+v", s)
	}
}

// A Close that comes while the replica's own lease upkeep is under way
// hands the call over only after that upkeep ends: an upkeep that began
// before Close would otherwise adopt the call the hand-over had just
// released, as the holder of a replica whose lease row is gone, which no
// other replica adopts (CI once saw the live restart test fail so).
func TestSidebandHandOverWaitsForUpkeep(t *testing.T) {
	t.Parallel()
	a := newFixture(t, options{simCfg: sim.Config{Script: phoneScript(), Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	b := newFixture(t, options{url: a.url, sim: a.sim, simURL: a.simURL})
	runReplica(t, a.svc)
	runReplica(t, b.svc)
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, _, _ := sidebandCall(t, ctx, a, p)
	holder := func() (h string) {
		if err := a.pool.QueryRow(ctx, `SELECT coalesce(holder, '') FROM voice_sessions WHERE id = $1`, start.SessionID).Scan(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	held := holder()

	resume := a.svc.PauseUpkeep()
	closed := make(chan struct{})
	go func() { defer close(closed); a.svc.Close() }()
	time.Sleep(300 * time.Millisecond) // a measurement window: time enough for a release that does not wait
	if h := holder(); h != held {
		resume()
		t.Fatalf("the call's holder went from %q to %q during an upkeep; want it released after", held, h)
	}
	resume()
	<-closed
	if a.svc.Held() != 0 || b.svc.Held() != 1 {
		t.Fatalf("after the hand-over a holds %d, b %d; want 0, 1", a.svc.Held(), b.svc.Held())
	}
}

// Usage observed on a held call is saved by the lease loop, in one
// statement for every call, without waiting for the end: what a holder
// that dies has seen is not lost with it.
func TestSidebandUsageSaved(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{simCfg: sim.Config{Script: phoneScript(), Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	runReplica(t, f.svc)
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, _ := sidebandCall(t, ctx, f, p)
	talkToolTurn(t, ctx, phone)
	testkit.Eventually(t, ctx, "the usage saved", func() bool {
		var audioOut int64
		_ = f.pool.QueryRow(ctx, `SELECT coalesce((observed->'Session'->>'AudioOut')::bigint, 0) FROM voice_sessions WHERE id = $1`,
			start.SessionID).Scan(&audioOut)
		return audioOut > 0
	})
}

// A call adopted after its first notice: the adopter gives only the
// notice still to come, then hangs up at the reservation. The adopter
// looks every 100 ms, so it is on before the second notice is due; the
// lease outlives 20 missed renewals, so a loaded machine does not move the
// call while its holder lives, and the dead holder's lease is ended on the
// database's clock.
func TestSidebandAdoptedCapNotices(t *testing.T) {
	t.Parallel()
	fast := func(c *config.Voice) { c.LeaseTTL, c.LeaseRenew = 2*time.Second, 100*time.Millisecond }
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := newFixture(t, options{registry: regA, quotaFn: shortPlan, configFn: fast,
		simCfg: sim.Config{Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	b := newFixture(t, options{url: a.url, sim: a.sim, simURL: a.simURL, registry: regB, quotaFn: shortPlan, configFn: fast})
	killA := runReplica(t, a.svc)
	runReplica(t, b.svc)
	p := newUser(t, "short")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, _, callID := sidebandCall(t, ctx, a, p)
	testkit.Eventually(t, ctx, "the first notice", func() bool { return sumMetric(t, regA, "voxgate_voice_sideband_cap_notices_total") == 1 })
	killA()
	lapse(t, ctx, b.pool, start.SessionID)
	ended := waitEnded(t, ctx, b, p, start.SessionID)
	if *ended.EndReason != controlplane.ReasonQuota {
		t.Fatalf("ended %s, want quota", *ended.EndReason)
	}
	if na, nb := sumMetric(t, regA, "voxgate_voice_sideband_cap_notices_total"), sumMetric(t, regB, "voxgate_voice_sideband_cap_notices_total"); na != 1 || nb != 1 {
		t.Fatalf("notices: %v by the first holder, %v by the adopter; want 1 and 1", na, nb)
	}
	if st, _ := a.sim.Call(callID); st.Sidebands != 2 || st.Responses != 2 {
		t.Fatalf("sim %+v: want two holders and two spoken notices", st)
	}
}
