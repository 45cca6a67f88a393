package controlplane_test

import (
	"context"
	"net/http"
	"path"
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

// hangupAfterCreate is the realtime client's transport for a provider
// that goes away right after answering a call: the call is hung up at the
// simulator before the gateway sees its answer, so nothing will answer
// the relay's ICE checks.
type hangupAfterCreate struct{ sim string }

func (h hangupAfterCreate) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != "POST" || req.URL.Path != "/v1/realtime/calls" || res.StatusCode != http.StatusCreated {
		return res, err
	}
	hang, _ := http.NewRequestWithContext(req.Context(), "POST", h.sim+"/v1/realtime/calls/"+path.Base(res.Header.Get("Location"))+"/hangup", nil)
	hang.Header.Set("Authorization", "Bearer "+simtest.TestKey)
	if hres, err := http.DefaultTransport.RoundTrip(hang); err == nil {
		hres.Body.Close()
	}
	return res, nil
}

// The provider goes away between its answer and the relay's ICE: the
// session ends error once with its record at the provider leg's connect
// deadline (5 s), not when ICE gives up checking (30 s).
func TestRelayProviderGoneBeforeConnect(t *testing.T) {
	t.Parallel()
	sim := &hangupAfterCreate{}
	f := newFixture(t, options{relay: true, rtTransport: sim})
	sim.sim = f.simURL
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := mustStart(t, f, p, `{"mode":"relay"}`)
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
	if w.Code != http.StatusCreated {
		t.Fatalf("offer: %d %s", w.Code, w.Body)
	}
	answered := time.Now()
	if err := phone.Accept(w.Body.String()); err != nil {
		t.Fatal(err)
	}
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	if took := time.Since(answered); *ended.EndReason != controlplane.ReasonError || ended.Cost == nil || took > 10*time.Second {
		t.Fatalf("ended %s %v after the answer, record %+v; want error at the 5 s deadline, a record", *ended.EndReason, took, ended.Cost)
	}
	testkit.Eventually(t, ctx, "the relay to close", func() bool { return f.svc.Relayed() == 0 && f.svc.Held() == 0 })
}
