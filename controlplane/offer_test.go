package controlplane_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// minimalOffer is the least SDP the offer check takes: one audio section.
// Tests against a stand-in provider that never reads it use it.
const minimalOffer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"

// phoneOffer is a real pion phone's offer.
func phoneOffer(t *testing.T, ctx context.Context) string {
	t.Helper()
	offer, err := simtest.NewCaller(t).Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return offer
}

// An offer that is not SDP with an audio section is the app's 400, found
// before it costs a provider call or an attempt; a real phone's offer
// still goes through after them.
func TestOfferChecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{"mode":"sideband"}`)
	head := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
	for _, tc := range []struct{ name, body string }{
		{"v=0 then garbage", "v=0\r\nhello world\r\n"},
		{"no media section", head},
		{"video only", head + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:96 VP8/90000\r\n"},
		{"binary after v=0", "v=0\r\n\x00\x01\x02"},
		{"leading text", "offer:\r\n" + head + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"},
	} {
		w := postOffer(t, f, p, start.SessionID, "application/sdp", tc.body)
		if e := decode[errorBody](t, w); w.Code != http.StatusBadRequest || e.Error.Code != "INVALID_REQUEST" {
			t.Errorf("%s: got %d %s, want 400 INVALID_REQUEST", tc.name, w.Code, w.Body)
		}
	}
	var attempts int
	if err := f.pool.QueryRow(ctx, `SELECT offer_attempts FROM voice_sessions WHERE id = $1`, start.SessionID).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != 0 {
		t.Errorf("got %d attempts counted for offers never sent, want 0", attempts)
	}
	if w := postOffer(t, f, p, start.SessionID, "application/sdp", phoneOffer(t, ctx)); w.Code != http.StatusCreated {
		t.Fatalf("a phone's offer: got %d %s, want 201", w.Code, w.Body)
	}
}

// A provider refusing an offer is the app's 422, not a configuration
// error; the app may try again, a fixed number of times per session.
func TestOfferRefusedByProvider(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{"mode":"sideband"}`)
	offer := phoneOffer(t, ctx)
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointRealtimeCalls, Kind: sim.FaultSDPReject,
		Count: controlplane.MaxOfferAttempts + 1}); err != nil {
		t.Fatal(err)
	}
	for i := range controlplane.MaxOfferAttempts {
		w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
		if e := decode[errorBody](t, w); w.Code != http.StatusUnprocessableEntity || e.Error.Code != "VALIDATION_ERROR" {
			t.Fatalf("attempt %d: got %d %s, want 422 VALIDATION_ERROR", i+1, w.Code, w.Body)
		}
	}
	w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
	if e := decode[errorBody](t, w); w.Code != http.StatusConflict || e.Error.Code != "CONFLICT" {
		t.Fatalf("attempt %d: got %d %s, want 409 CONFLICT", controlplane.MaxOfferAttempts+1, w.Code, w.Body)
	}
	if n := len(f.sim.Faults()); n != 1 {
		t.Fatalf("got %d faults left, want the one the refused attempt never reached", n)
	}
}
