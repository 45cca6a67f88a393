package simtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pion/webrtc/v4"
	"github.com/voxgate/voxgate/sim"
)

// BareEcho answers a call offer (POST /v1/realtime/calls, multipart, as the
// simulator takes it) with a pion peer that echoes RTP and nothing else:
// no session, no events, no script. Benchmarks measure the simulator's and
// the gateway's media cost against it.
type BareEcho struct {
	mu  sync.Mutex
	pcs []*webrtc.PeerConnection
}

// NewBareEcho serves a BareEcho on loopback; its peers and server close
// when the test ends.
func NewBareEcho(tb testing.TB) (*BareEcho, *httptest.Server) {
	tb.Helper()
	e := &BareEcho{}
	ts := httptest.NewServer(e)
	tb.Cleanup(func() {
		ts.Close()
		e.Close()
	})
	return e, ts
}

// Close closes every peer the echo answered.
func (e *BareEcho) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, pc := range e.pcs {
		_ = pc.Close()
	}
	e.pcs = nil
}

func (e *BareEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	api, err := sim.NewOpusAPI(sim.LoopbackSettingEngine())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	e.mu.Lock()
	e.pcs = append(e.pcs, pc)
	e.mu.Unlock()
	answer, err := echoAnswer(pc, r.FormValue("sdp"))
	if err != nil {
		_ = pc.Close()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Location", "/v1/realtime/calls/rtc_"+strings.Repeat("0", 8))
	w.Header().Set("Content-Type", "application/sdp")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(answer))
}

// echoAnswer wires pc to send back every packet it receives and answers
// offer with every candidate gathered.
func echoAnswer(pc *webrtc.PeerConnection, offer string) (string, error) {
	out, err := webrtc.NewTrackLocalStaticRTP(sim.OpusCapability(), "audio", "echo")
	if err != nil {
		return "", err
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", err
	}
	if _, err := pc.AddTrack(out); err != nil {
		return "", err
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		buf := make([]byte, 1500)
		for {
			n, _, err := tr.Read(buf)
			if err != nil {
				return
			}
			_, _ = out.Write(buf[:n])
		}
	})
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", err
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return "", err
	}
	<-gathered
	return pc.LocalDescription().SDP, nil
}
