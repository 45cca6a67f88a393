package controlplane_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// postOffer sends an SDP offer to the session's sdp route as p.
func postOffer(t testing.TB, f fixture, p auth.Principal, id, ctype, offer string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", "/v1/voice/sessions/"+id+"/sdp", strings.NewReader(offer))
	r.Header.Set("Content-Type", ctype)
	r = r.WithContext(auth.WithPrincipal(r.Context(), p))
	r.SetPathValue("id", id)
	w := httptest.NewRecorder()
	httpx.Handle(f.svc.HandleSDP).ServeHTTP(w, r)
	return w
}

// sidebandCall starts a sideband session for p and places its call with
// a pion phone through the gateway.
func sidebandCall(t *testing.T, ctx context.Context, f fixture, p auth.Principal) (controlplane.StartResponse, *simtest.Caller, string) {
	t.Helper()
	start := mustStart(t, f, p, `{"mode":"sideband"}`)
	if start.ClientSecret != nil || start.RealtimeURL != "" || start.SDPURL != "/v1/voice/sessions/"+start.SessionID+"/sdp" {
		t.Fatalf("sideband start: %+v", start)
	}
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
	if w.Code != http.StatusCreated || w.Header().Get("Content-Type") != "application/sdp" {
		t.Fatalf("offer: %d %s %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if err := phone.Accept(w.Body.String()); err != nil {
		t.Fatal(err)
	}
	if err := phone.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	calls := f.sim.Calls()
	callID := calls[len(calls)-1].ID
	waitHeld(t, ctx, f, callID, 1)
	return start, phone, callID
}

// waitHeld waits until the call has had n sideband attaches.
func waitHeld(t testing.TB, ctx context.Context, f fixture, callID string, n int64) {
	t.Helper()
	testkit.Eventually(t, ctx, fmt.Sprintf("call %s: %d sideband attaches", callID, n), func() bool {
		st, _ := f.sim.Call(callID)
		return st.Sidebands >= n
	})
}

// usageEvent sums the usage of one response.done or transcription event
// into total or transcription; it reports a response.done.
func usageEvent(t testing.TB, ev simtest.Event, total, transcription *rtUsage) bool {
	t.Helper()
	switch ev.Type {
	case "conversation.item.input_audio_transcription.completed":
		var tr struct {
			Usage rtUsage `json:"usage"`
		}
		if err := json.Unmarshal(ev.Raw, &tr); err != nil {
			t.Fatal(err)
		}
		transcription.add(tr.Usage)
	case "response.done":
		var d struct {
			Response struct {
				Usage rtUsage `json:"usage"`
			} `json:"response"`
		}
		if err := json.Unmarshal(ev.Raw, &d); err != nil {
			t.Fatal(err)
		}
		total.add(d.Response.Usage)
		return true
	case "error":
		t.Fatalf("error event: %s", ev.Raw)
	}
	return false
}

// The phone in sideband mode: it posts its offer to the gateway, talks,
// and never sees a tool call through the gateway's API: the gateway runs
// the scripted call off the sideband and answers it once, with one
// response.create. The record is what the gateway observed, equal to the
// usage the phone saw priced by hand; the usage the phone reports at the
// end is ignored.
func TestSidebandPhoneCall(t *testing.T) {
	t.Parallel()
	var runs int64
	f := newFixture(t, options{runs: &runs, configFn: handPricedModels, simCfg: sim.Config{Script: phoneScript(),
		Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, callID := sidebandCall(t, ctx, f, p)

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
	if runs != 1 || st.ToolCalls != 1 || st.ToolOutputs[sim.PathSideband] != 1 || st.ToolOutputs[sim.PathDataChannel] != 0 || st.Responses != 2 {
		t.Fatalf("tool ran %d times; sim %+v: want one call answered once over the sideband, two responses", runs, st)
	}
	if total.OutputTokenDetails.AudioTokens == 0 || transcription.InputTokenDetails.AudioTokens == 0 {
		t.Fatalf("usage %+v, transcription %+v: want spoken audio and a transcription", total, transcription)
	}

	body := []byte(`{"reason":"user_hangup","usage":{"output_token_details":{"audio_tokens":999999}}}`)
	w := call(t, f.svc.HandleEnd, p, "POST", "/", body, start.SessionID)
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
	if st, _ := f.sim.Call(callID); st.Status != "ended" || st.EndReason != "hangup" {
		t.Fatalf("the call after end: %+v", st)
	}
	if n := f.svc.Held(); n != 0 {
		t.Fatalf("%d calls still held after the end", n)
	}
	// A second end changes nothing.
	again := decode[controlplane.Session](t, call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID))
	if again.Cost == nil || again.Cost.ID != ended.Cost.ID || *again.EndReason != controlplane.ReasonUserHangup {
		t.Fatalf("second end: %+v", again)
	}
}

// One offer per session, the right content type, a size cap checked
// before reading, and no offer for a direct session or another user's.
func TestSidebandOfferRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alice, bob := newUser(t, "pro"), newUser(t, "pro")
	start, _, _ := sidebandCall(t, ctx, f, alice)
	direct := mustStart(t, f, bob, `{}`)
	offer := phoneOffer(t, ctx) // offers are parsed before anything else
	big := "v=0\r\n" + strings.Repeat("a=x\r\n", controlplane.MaxOfferBytes/5+1)
	cases := []struct {
		name   string
		p      auth.Principal
		id     string
		ctype  string
		body   string
		status int
		code   string
	}{
		{"second offer", alice, start.SessionID, "application/sdp", offer, 409, "CONFLICT"},
		{"json body", alice, start.SessionID, "application/json", `{"sdp":"v=0"}`, 400, "INVALID_REQUEST"},
		{"not sdp", alice, start.SessionID, "application/sdp", "hello", 400, "INVALID_REQUEST"},
		{"too large", alice, start.SessionID, "application/sdp", big, 413, "PAYLOAD_TOO_LARGE"},
		{"another user's", bob, start.SessionID, "application/sdp", offer, 404, "NOT_FOUND"},
		{"direct session", bob, direct.SessionID, "application/sdp", offer, 409, "CONFLICT"},
		{"bad id", alice, "vs_nope", "application/sdp", offer, 404, "NOT_FOUND"},
	}
	for _, tc := range cases {
		w := postOffer(t, f, tc.p, tc.id, tc.ctype, tc.body)
		if w.Code != tc.status || decode[errorBody](t, w).Error.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, w.Code, w.Body, tc.status, tc.code)
		}
	}
	// The size cap is checked on the declared length, before reading.
	r := httptest.NewRequest("POST", "/", &endless{})
	r.ContentLength = controlplane.MaxOfferBytes + 1
	r.Header.Set("Content-Type", "application/sdp")
	r = r.WithContext(auth.WithPrincipal(r.Context(), alice))
	r.SetPathValue("id", start.SessionID)
	w := httptest.NewRecorder()
	httpx.Handle(f.svc.HandleSDP).ServeHTTP(w, r)
	if w.Code != 413 {
		t.Fatalf("declared oversize: %d %s", w.Code, w.Body)
	}
}

// endless is a body that fails the test's purpose if read: it never ends.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	e.read += len(p)
	return copy(p, bytes.Repeat([]byte("a"), len(p))), nil
}

// untilResponses reads the phone's events until n response.done.
func untilResponses(ctx context.Context, phone *simtest.Caller, n int) error {
	for n > 0 {
		ev, err := phone.Next(ctx)
		if err != nil {
			return err
		}
		if ev.Type == "response.done" {
			n--
		}
	}
	return nil
}
