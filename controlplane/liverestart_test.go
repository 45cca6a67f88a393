package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The replica holding a live call restarts mid-call (Close, as on
// SIGTERM): its sideband's socket closes with a close frame, which on a
// sideband attached without graceful_close=false ends the session (the
// simulator's default, as the API's may be). The gateway attaches with
// graceful_close=false, so the call survives: the phone stays connected,
// the other replica adopts the session, answers the next delegation once,
// and the voice of both answers reaches the phone as RTP.
func TestLiveRestartMidCallSurvives(t *testing.T) {
	t.Parallel()
	var runsA, runsB int64
	cfg := oneTurn(liveScript(), simtest.ZeroLatency())
	a := newFixture(t, options{runs: &runsA, backend: "gpt-4.1-mini", simCfg: cfg})
	b := newFixture(t, options{runs: &runsB, url: a.url, sim: a.sim, simURL: a.simURL, backend: "gpt-4.1-mini"})
	runReplica(t, a.svc)
	runReplica(t, b.svc)
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, phone, liveID := liveCall(t, ctx, a, p)
	if n := phone.PacketsReceived(); n != 0 {
		t.Fatalf("the phone got %d packets before the voice said anything", n)
	}
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitAppended(t, ctx, a, liveID, "session.commentary.append")
	testkit.Eventually(t, ctx, "the first answer's voice on the phone", func() bool { return phone.PacketsReceived() > 0 })
	heard := phone.PacketsReceived()

	a.svc.Close() // the restart: a's sideband closes, b adopts
	if st, _ := a.sim.LiveSession(liveID); st.Status != "active" {
		t.Fatalf("the restart closed the live session (%s); want it up", st.CloseReason)
	}
	if a.svc.Held() != 0 || b.svc.Held() != 1 {
		t.Fatalf("after the restart a holds %d, b %d; want 0, 1", a.svc.Held(), b.svc.Held())
	}
	if s := getSession(t, a, p, start.SessionID); !s.Active() {
		t.Fatalf("the session ended %s on a restart", *s.EndReason)
	}

	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the adopter's answer", func() bool {
		st, _ = a.sim.LiveSession(liveID)
		return len(appended(st, "session.commentary.append")) >= 2
	})
	testkit.Eventually(t, ctx, "the second answer's voice on the phone", func() bool { return phone.PacketsReceived() > heard })
	if n := len(appended(st, "session.commentary.append")); n != 2 || runsA != 1 || runsB != 1 || len(st.Delegations) != 2 {
		t.Fatalf("%d commentaries, echo ran %d on a and %d on b, delegations %v; want 2, 1, 1, two", n, runsA, runsB, st.Delegations)
	}
	if s := phone.PC.ConnectionState(); s != webrtc.PeerConnectionStateConnected {
		t.Fatalf("the phone's peer is %s; want connected throughout", s)
	}
	ended := decode[controlplane.Session](t, call(t, b.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID))
	if ended.Cost == nil || ended.Cost.Tokens.BackendTextOut == 0 {
		t.Fatalf("the adopter's record %+v; want both delegations' backend tokens", ended.Cost)
	}
	t.Logf("the phone received %d RTP packets of voice", phone.PacketsReceived())
}
