package controlplane_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// heardSeqs records the sequence numbers of the audio a phone hears.
type heardSeqs struct {
	mu   sync.Mutex
	seqs []uint16
}

func (h *heardSeqs) get() []uint16 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]uint16(nil), h.seqs...)
}

// relayCall starts a relayed session for p and places its call through
// the gateway's relay with a pion phone that records what it hears, and
// returns once both legs are up.
func relayCall(t *testing.T, ctx context.Context, f fixture, p auth.Principal) (controlplane.StartResponse, *simtest.Caller, *heardSeqs, string) {
	t.Helper()
	return relayCallWith(t, ctx, f, p, simtest.NewCaller(t), nil)
}

// relayCallWith is relayCall with the phone given; answer, when set,
// rewrites the gateway's answer before the phone applies it (a network
// that blocks UDP makes its UDP candidates useless).
func relayCallWith(t *testing.T, ctx context.Context, f fixture, p auth.Principal, phone *simtest.Caller,
	answer func(string) string) (controlplane.StartResponse, *simtest.Caller, *heardSeqs, string) {
	t.Helper()
	start := mustStart(t, f, p, `{"mode":"relay"}`)
	if start.Mode != controlplane.ModeRelay || start.ClientSecret != nil || start.SDPURL != "/v1/voice/sessions/"+start.SessionID+"/sdp" {
		t.Fatalf("relay start: %+v", start)
	}
	heard := &heardSeqs{}
	phone.PC.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			pkt, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			heard.mu.Lock()
			heard.seqs = append(heard.seqs, pkt.SequenceNumber)
			heard.mu.Unlock()
		}
	})
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	calls := len(f.sim.Calls())
	w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
	if w.Code != http.StatusCreated || w.Header().Get("Content-Type") != "application/sdp" {
		t.Fatalf("offer: %d %s %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	sdp := w.Body.String()
	if answer != nil {
		sdp = answer(sdp)
	}
	if err := phone.Accept(sdp); err != nil {
		t.Fatal(err)
	}
	if err := phone.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	// The provider's session.created, relayed as its channel opens: both
	// legs are up.
	if _, _, err := simtest.Until(ctx, phone, "session.created"); err != nil {
		t.Fatal(err)
	}
	all := f.sim.Calls()
	if len(all) != calls+1 {
		t.Fatalf("the sim has %d calls, want %d: the relay places one", len(all), calls+1)
	}
	return start, phone, heard, all[len(all)-1].ID
}

// The phone in relay mode: its peer is the gateway. Its Opus reaches the
// simulator through the relay, the simulator's audio reaches it with
// continuous sequence numbers, the scripted tool call is run by the
// gateway off the relayed channel and answered there once, and the
// record is the usage the gateway observed, equal to what the phone saw
// priced by hand. The phone's session.update changing the tools is
// answered with an error and never reaches the simulator.
func TestRelayPhoneCall(t *testing.T) {
	t.Parallel()
	var runs int64
	reg := prometheus.NewRegistry()
	f := newFixture(t, options{relay: true, registry: reg, runs: &runs, configFn: handPricedModels, simCfg: sim.Config{Script: phoneScript(),
		Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, heard, callID := relayCall(t, ctx, f, p)
	if n := f.svc.Relayed(); n != 1 {
		t.Fatalf("%d relayed calls, want 1", n)
	}

	// The phone tries to give the model a tool of its own.
	before, _ := f.sim.Call(callID)
	if err := phone.Send(map[string]any{"type": "session.update", "event_id": "evt_tools",
		"session": map[string]any{"type": "realtime", "tools": []map[string]any{{"type": "function", "name": "steal", "parameters": map[string]any{}}}}}); err != nil {
		t.Fatal(err)
	}
	ev, _, err := simtest.Until(ctx, phone, "error")
	if err != nil {
		t.Fatal(err)
	}
	if m := ev.Map()["error"].(map[string]any); m["code"] != "event_not_allowed" || m["event_id"] != "evt_tools" {
		t.Fatalf("refusal: %s", ev.Raw)
	}

	if err := phone.SendAudio(ctx, 75, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var total, transcription rtUsage
	for responses := 0; responses < 2; {
		ev, err := phone.Next(ctx)
		if err != nil {
			t.Fatalf("after %d responses: %v", responses, err)
		}
		if usageEvent(t, ev, &total, &transcription) {
			responses++
		}
	}
	st, _ := f.sim.Call(callID)
	if runs != 1 || st.ToolCalls != 1 || st.ToolOutputs[sim.PathDataChannel] != 1 || st.Responses != 2 {
		t.Fatalf("tool ran %d times; sim %+v: want one call answered once over the relayed channel, two responses", runs, st)
	}
	if st.PacketsIn < 50 {
		t.Fatalf("the sim received %d packets of the phone's 75", st.PacketsIn)
	}
	// The session.update never reached the model: every client event the
	// sim saw since is the gateway's answer to the call (one output, one
	// response.create) or the phone's audio turn.
	if got := st.EventsIn - before.EventsIn; got != 2 {
		t.Fatalf("the sim saw %d client events after the phone's session.update, want the gateway's 2", got)
	}
	if total.OutputTokenDetails.AudioTokens == 0 || transcription.InputTokenDetails.AudioTokens == 0 {
		t.Fatalf("usage %+v, transcription %+v: want spoken audio and a transcription", total, transcription)
	}
	testkit.Eventually(t, ctx, "the sim's audio at the phone", func() bool { return len(heard.get()) >= 10 })
	seqs := heard.get()
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("heard sequence %d after %d (packet %d of %d)", seqs[i], seqs[i-1], i, len(seqs))
		}
	}

	if up, down := relayMetric(t, reg, "voxgate_voice_relay_packets_total", "up"), relayMetric(t, reg, "voxgate_voice_relay_packets_total", "down"); up < 50 || down < 10 {
		t.Fatalf("relayed packets counted: %v up, %v down", up, down)
	}
	if n := relayMetric(t, reg, "voxgate_voice_relay_forward_seconds", "up"); n < 50 {
		t.Fatalf("%v packets in the forwarding latency histogram, want every one relayed up", n)
	}
	if n := relayMetric(t, reg, "voxgate_voice_relay_rtt_seconds", "phone"); n != 1 {
		t.Fatalf("%v phone legs in the RTT histogram, want 1", n)
	}
	if n := relayMetric(t, reg, "voxgate_voice_relay_events_dropped_total", "session.update"); n != 1 {
		t.Fatalf("%v session.update events dropped, want 1", n)
	}
	if n := relayMetric(t, reg, "voxgate_voice_relay_sessions", ""); n != 1 {
		t.Fatalf("%v relayed sessions, want 1", n)
	}
	w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"reason":"user_hangup","usage":{"output_token_details":{"audio_tokens":999999}}}`), start.SessionID)
	if w.Code != 200 {
		t.Fatalf("end: %d %s", w.Code, w.Body)
	}
	ended := decode[controlplane.Session](t, w)
	if ended.Cost == nil || ended.Cost.CostMicros == nil || ended.Cost.UsageSource != billing.SourceServerObserved {
		t.Fatalf("record: %+v", ended.Cost)
	}
	if got, want := *ended.Cost.CostMicros, handPrice(total, transcription); got != want {
		t.Fatalf("cost %d micros, hand-priced %d (usage %+v, transcription %+v)", got, want, total, transcription)
	}
	if *ended.EndReason != controlplane.ReasonUserHangup {
		t.Fatalf("end reason %s", *ended.EndReason)
	}
	if st, _ := f.sim.Call(callID); st.Status != "ended" {
		t.Fatalf("the call after end: %+v", st)
	}
	if n := f.svc.Relayed(); n != 0 {
		t.Fatalf("%d relayed calls after the end", n)
	}
	if up := relayMetric(t, reg, "voxgate_voice_relay_packets_total", "up"); up < 50 {
		t.Fatalf("%v packets up after the end: a closed call's figures are kept", up)
	}
	testkit.Eventually(t, ctx, "the phone's connection closed", func() bool {
		s := phone.PC.ConnectionState()
		return s == webrtc.PeerConnectionStateClosed || s == webrtc.PeerConnectionStateFailed || s == webrtc.PeerConnectionStateDisconnected
	})
}

// relayMetric is the value of the series of name whose one label is
// label (any, when label is ""): a counter's or gauge's value, a
// histogram's count.
func relayMetric(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) == 0 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}
