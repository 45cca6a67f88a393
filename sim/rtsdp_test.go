package sim_test

import (
	"strings"
	"testing"

	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeAnswerSDP: call ids have the API's shape, and the answer to a
// browser-like offer (transport-cc feedback and the transport-wide-cc
// header extension) advertises neither, since the sim never sends that
// feedback.
func TestRealtimeAnswerSDP(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{})
	m := &webrtc.MediaEngine{}
	codec := sim.OpusCapability()
	codec.RTCPFeedback = []webrtc.RTCPFeedback{{Type: webrtc.TypeRTCPFBTransportCC}}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: codec, PayloadType: 111}, webrtc.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: sdp.TransportCCURI}, webrtc.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	pc, err := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(sim.LoopbackSettingEngine())).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.CreateDataChannel(sim.DataChannelLabel, nil); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(offer.SDP, "transport-cc") || !strings.Contains(offer.SDP, sdp.TransportCCURI) {
		t.Fatalf("the offer does not ask for transport-cc:\n%s", offer.SDP)
	}
	form, ctype := simtest.CallForm(offer.SDP, recipeSession)
	resp, body := do(t, "POST", base+"/v1/realtime/calls", simtest.TestKey, ctype, form)
	if resp.StatusCode != 201 {
		t.Fatalf("create call: %d %s", resp.StatusCode, body)
	}
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, "/v1/realtime/calls/rtc_u1_") {
		t.Errorf("Location %q, want /v1/realtime/calls/rtc_u1_…", loc)
	}
	if answer := string(body); strings.Contains(answer, "transport-cc") || strings.Contains(answer, sdp.TransportCCURI) {
		t.Errorf("the answer advertises transport-cc:\n%s", answer)
	}
}
