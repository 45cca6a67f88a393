package controlplane_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

var udpCandidate = regexp.MustCompile(`(?m)^a=candidate:\S+ \d+ udp .*\r?\n`)

// A phone on a network that blocks UDP: it may use ICE over TCP only, and
// the UDP candidates of the gateway's answer are useless to it (dropped
// before it applies the answer). Through POST /v1/voice/sessions (relay)
// and its offer, the call connects over the relay's ICE-TCP port, the
// phone's audio reaches the simulator and the simulator's reaches it.
func TestRelayPhoneOverTCPOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{relay: true})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	se := sim.LoopbackSettingEngine()
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeTCP4})
	phone := simtest.NewCallerWith(t, se)
	start, phone, heard, callID := relayCallWith(t, ctx, f, p, phone, func(answer string) string {
		if !udpCandidate.MatchString(answer) {
			t.Errorf("the answer offers no UDP candidate to drop:\n%s", answer)
		}
		return udpCandidate.ReplaceAllString(answer, "")
	})
	pair, err := phone.PC.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil || pair.Local.Protocol.String() != "tcp" {
		t.Fatalf("the phone's selected pair %v (%v): want TCP", pair, err)
	}
	if err := phone.SendAudio(ctx, 50, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ctx, "the phone's audio at the sim", func() bool {
		st, _ := f.sim.Call(callID)
		return st.PacketsIn >= 40
	})
	testkit.Eventually(t, ctx, "the sim's audio at the phone", func() bool { return len(heard.get()) >= 10 })
	w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"reason":"user_hangup"}`), start.SessionID)
	if w.Code != 200 {
		t.Fatalf("end: %d %s", w.Code, w.Body)
	}
}

// The phone's network vanishes mid-call: no DTLS close, its packets stop
// both ways. The relay's consent checks go unanswered, ICE fails the
// phone's leg, and the session ends error once with its record, the
// provider's call hung up.
func TestRelayPhoneNetworkVanishes(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	f := newFixture(t, options{relay: true, registry: reg, relayICE: time.Second})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := simtest.NewCutConn(t)
	start, phone, _, callID := relayCallWith(t, ctx, f, p, simtest.NewCallerWith(t, conn.SettingEngine()), nil)
	if err := phone.SendAudio(ctx, 10, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	conn.Cut()
	cut := time.Now()
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	if took := time.Since(cut); *ended.EndReason != controlplane.ReasonError || ended.Cost == nil || took > 15*time.Second {
		t.Fatalf("ended %s %v after the cut, record %+v; want error within the ICE timeouts, a record", *ended.EndReason, took, ended.Cost)
	}
	testkit.Eventually(t, ctx, "the relay to close", func() bool { return f.svc.Relayed() == 0 && f.svc.Held() == 0 })
	if st, _ := f.sim.Call(callID); st.Status != "ended" {
		t.Fatalf("the provider's call is still up: %+v", st)
	}
	if n := sumMetric(t, reg, "voxgate_voice_sessions_ended_total"); n != 1 {
		t.Fatalf("%v ends, want 1", n)
	}
}
