package controlplane_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A 429 at create is GPT-Live's per-organisation concurrent-session cap
// for the model, normal load: the phone's offer is answered as a provider
// rate limit with the provider's wait (Retry-After and retry_after_s, DESIGN
// §5), and the same session's next offer, once the cap frees, is placed.
func TestLiveCreateRateLimitedAnswersWait(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: liveSim(sim.Live{})})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: sim.FaultRateLimit, RetryAfter: 7, Count: 1}); err != nil {
		t.Fatal(err)
	}
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := mustStart(t, f, p, `{"mode":"live"}`)
	offer, err := simtest.NewCaller(t).Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
	body := decode[errorBody](t, w)
	if w.Code != http.StatusTooManyRequests || body.Error.Code != "AI_RATE_LIMITED" || w.Header().Get("Retry-After") != "7" ||
		body.Error.RetryAfterS != 7 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("offer at the provider's cap: %d %v %s; want 429 AI_RATE_LIMITED with a 7 s wait", w.Code, w.Header(), w.Body)
	}
	if n := len(f.sim.LiveSessions()); n != 0 {
		t.Fatalf("%d live sessions after a refused create; want none", n)
	}
	phone := simtest.NewCaller(t)
	if offer, err = phone.Offer(ctx); err != nil {
		t.Fatal(err)
	}
	if w := postOffer(t, f, p, start.SessionID, "application/sdp", offer); w.Code != http.StatusCreated {
		t.Fatalf("the offer again: %d %s; want the session placed", w.Code, w.Body)
	}
}

// The session is created but its sideband cannot be attached (the
// provider answers 500 twice): the holder gives up, and since a WebRTC
// session left open bills until it expires, the gateway attaches again
// only to close it, which the second refusal does not stop. The session
// ends error, its record the 15 s start charge, and the provider's session is
// closed at the gateway's request.
func TestLiveAttachFailureClosesSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: liveSim(sim.Live{})})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultServerError, Count: 2}); err != nil {
		t.Fatal(err)
	}
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := mustStart(t, f, p, `{"mode":"live"}`)
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
	if w.Code != http.StatusCreated {
		t.Fatalf("offer: %d %s", w.Code, w.Body)
	}
	ended := waitEnded(t, ctx, f, p, start.SessionID)
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the provider's session closed", func() bool {
		sessions := f.sim.LiveSessions()
		st = sessions[len(sessions)-1]
		return st.Status == "closed"
	})
	if *ended.EndReason != controlplane.ReasonError || st.CloseReason != "close_requested" || ended.Cost == nil ||
		ended.Cost.DurationMS != 15_000 || ended.Cost.CostMicros == nil || *ended.Cost.CostMicros != priceLive(15_000) {
		t.Fatalf("ended %s, record %+v, the provider's session closed %q; want error at the 15 s start charge, close_requested",
			*ended.EndReason, ended.Cost, st.CloseReason)
	}
}

// When no attach gets through, not the holder's and not the close's three,
// the session ends for the app, the provider's session is left running
// (it bills until it expires), and that is counted for an alert
// (voxgate_voice_live_sessions_left_open_total), not only logged.
func TestLiveSessionLeftOpenCounted(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	f := newFixture(t, options{registry: reg, backend: "gpt-4.1-mini", simCfg: liveSim(sim.Live{})})
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultServerError, Count: 50}); err != nil {
		t.Fatal(err)
	}
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := mustStart(t, f, p, `{"mode":"live"}`)
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := postOffer(t, f, p, start.SessionID, "application/sdp", offer); w.Code != http.StatusCreated {
		t.Fatalf("offer: %d %s", w.Code, w.Body)
	}
	if ended := waitEnded(t, ctx, f, p, start.SessionID); *ended.EndReason != controlplane.ReasonError {
		t.Fatalf("ended %s; want error", *ended.EndReason)
	}
	testkit.Eventually(t, ctx, "the session counted as left open", func() bool {
		return sumMetric(t, reg, "voxgate_voice_live_sessions_left_open_total") == 1
	})
	sessions := f.sim.LiveSessions()
	if st := sessions[len(sessions)-1]; st.Status != "active" {
		t.Fatalf("the provider's session is %s (%s); want it left running", st.Status, st.CloseReason)
	}
}
