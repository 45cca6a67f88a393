package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools"
)

// The whole direct-mode lifecycle through the handlers: start, a tool call
// (and its replay), end with usage, the session with its cost record, the
// list, and a second end that changes nothing.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	var runs int64
	// The usage below is hand-priced at gpt-realtime's and a token-billed
	// transcription model's rows.
	f := newFixture(t, options{runs: &runs, configFn: handPricedModels})
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{"voice":"marin","language":"en"}`)

	if start.Mode != "direct" || start.ClientSecret == nil || !strings.HasPrefix(start.ClientSecret.Value, "ek_") ||
		!strings.HasSuffix(start.RealtimeURL, "/v1/realtime/calls") || !strings.HasPrefix(start.RealtimeURL, "http") {
		t.Fatalf("start %+v", start)
	}
	if start.MaxDurationS != 1800 || start.Quota.SecondsLimit != 18_000 || start.Quota.SecondsRemaining == nil {
		t.Fatalf("pro plan: max %d, quota %+v", start.MaxDurationS, start.Quota)
	}
	names := []string{}
	for _, tl := range start.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "echo,profile" {
		t.Fatalf("voice tools %v, want echo,profile (private is not voice)", names)
	}
	if d := time.Until(start.ClientSecret.ExpiresAt); d > 61*time.Second || d < 50*time.Second {
		t.Fatalf("secret expires in %v, want about 60 s", d)
	}

	tc := call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(`{"call_id":"call_1","name":"echo","arguments":"{\"q\":\"pasta\"}"}`), start.SessionID)
	if tc.Code != 200 {
		t.Fatalf("tool call: %d %s", tc.Code, tc.Body)
	}
	res := decode[tools.Result](t, tc)
	if res.CallID != "call_1" || res.Replayed || !strings.Contains(res.Output, "pasta") || res.SafetyFlags == nil {
		t.Fatalf("tool result %+v", res)
	}
	again := decode[tools.Result](t, call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(`{"call_id":"call_1","name":"echo","arguments":{"q":"pasta"}}`), start.SessionID))
	if !again.Replayed || again.Output != res.Output || runs != 1 {
		t.Fatalf("replay %+v, tool ran %d times", again, runs)
	}

	usage := `{"reason":"user_hangup","usage":{"total_tokens":9999,"input_tokens":1800,"output_tokens":1100,"novel_field":{"x":1},
		"input_token_details":{"text_tokens":1200,"audio_tokens":600,"image_tokens":0,"cached_tokens":1100,
			"cached_tokens_details":{"text_tokens":1000,"audio_tokens":100}},
		"output_token_details":{"text_tokens":300,"audio_tokens":800},
		"transcription":{"type":"tokens","input_tokens":600,"output_tokens":40,"input_token_details":{"text_tokens":0,"audio_tokens":600}}}}`
	end := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(usage), start.SessionID)
	if end.Code != 200 {
		t.Fatalf("end: %d %s", end.Code, end.Body)
	}
	ended := decode[controlplane.Session](t, end)
	// Independent of the ledger: the prices of prices.yaml applied by hand
	// (the same counts as billing's own test): 75,240 micros.
	if ended.Cost == nil || ended.Cost.CostMicros == nil || *ended.Cost.CostMicros != 75_240 ||
		ended.Cost.UsageSource != billing.SourceClientReported || *ended.EndReason != "user_hangup" {
		t.Fatalf("ended %+v cost %+v", ended, ended.Cost)
	}
	if *ended.DurationMS < 0 || *ended.DurationMS > 5000 || *ended.ChargedS < 1 || *ended.ChargedS > 5 {
		t.Fatalf("duration %d ms, charged %d s; want a few seconds at most", *ended.DurationMS, *ended.ChargedS)
	}

	// The session's tokens and cost count toward the user's day, where the
	// plan's daily caps cover voice and chat together.
	var dayTokens, dayCost int64
	if err := f.pool.QueryRow(context.Background(), `SELECT day_tokens, day_cost FROM quota_users WHERE user_id = $1`,
		p.UserID).Scan(&dayTokens, &dayCost); err != nil || dayTokens != 1200+300+600+800+600+40 || dayCost != 75_240 {
		t.Fatalf("day: %d tokens, %d micros (%v); want 3540, 75240", dayTokens, dayCost, err)
	}

	// A second end, even with other usage, is the first end's record.
	second := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"reason":"app_closed","usage":{"output_token_details":{"audio_tokens":5}}}`), start.SessionID)
	again2 := decode[controlplane.Session](t, second)
	if second.Code != 200 || *again2.EndReason != "user_hangup" || *again2.Cost.CostMicros != 75_240 || again2.Cost.ID != ended.Cost.ID {
		t.Fatalf("second end: %d %+v", second.Code, again2)
	}
	var records int
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM usage_records WHERE session_id = $1`, start.SessionID).Scan(&records); err != nil || records != 1 {
		t.Fatalf("%d records (%v), want 1", records, err)
	}
	if err := f.pool.QueryRow(context.Background(), `SELECT day_cost FROM quota_users WHERE user_id = $1`, p.UserID).Scan(&dayCost); err != nil || dayCost != 75_240 {
		t.Fatalf("after a second end the day holds %d micros (%v); want 75240, charged once", dayCost, err)
	}

	got := decode[controlplane.Session](t, call(t, f.svc.HandleGet, p, "GET", "/", nil, start.SessionID))
	if got.Cost == nil || got.Cost.ID != ended.Cost.ID {
		t.Fatalf("GET session: %+v", got)
	}
	// After the end, a tool call is 409.
	if w := call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(`{"call_id":"call_2","name":"echo","arguments":"{}"}`), start.SessionID); w.Code != 409 ||
		decode[errorBody](t, w).Error.Code != "SESSION_ENDED" {
		t.Fatalf("tool call after end: %d %s", w.Code, w.Body)
	}
}

// The profile the model sees has the allowed fields and never the display
// name or the user id. A direct start's answer carries the instructions the
// secret was minted with (the call's session.created shows them to the
// phone anyway); a held mode's answer does not.
func TestInstructionsCarryTheProfileOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{}`)
	// The secret opens a call whose session.created carries the config the
	// gateway minted: what the model will be told.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	caller := simtest.NewCaller(t)
	base := strings.TrimSuffix(start.RealtimeURL, "/v1/realtime/calls")
	if _, err := caller.Dial(ctx, base, start.ClientSecret.Value); err != nil {
		t.Fatal(err)
	}
	var raw string
	for raw == "" {
		ev, err := caller.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "session.created" {
			raw = string(ev.Raw)
		}
	}
	for _, want := range []string{"vegetarian", "peanut"} {
		if !strings.Contains(raw, want) {
			t.Errorf("instructions lack %q: %s", want, raw)
		}
	}
	for _, never := range []string{"Secretname", p.UserID} {
		if strings.Contains(raw, never) {
			t.Errorf("the session config holds %q: %s", never, raw)
		}
	}
	var created struct {
		Session struct {
			Instructions string `json:"instructions"`
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(raw), &created); err != nil {
		t.Fatal(err)
	}
	if start.Instructions == "" || start.Instructions != created.Session.Instructions {
		t.Errorf("the start answered instructions %q; the call was minted with %q", start.Instructions, created.Session.Instructions)
	}
	if held := mustStart(t, f, newUser(t, "pro"), `{"mode":"sideband"}`); held.Instructions != "" {
		t.Errorf("a sideband start answered its instructions: %q", held.Instructions)
	}
}

func TestErrorCases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	alice, bob := newUser(t, "pro"), newUser(t, "pro")
	s := mustStart(t, f, alice, `{}`)
	big := `{"call_id":"c","name":"echo","arguments":{"q":"` + strings.Repeat("a", 10_240) + `"}}`
	exact := func(n int) []byte { // a body of exactly n bytes
		head := `{"call_id":"c9","name":"echo","arguments":{"q":"`
		tail := `"}}`
		return []byte(head + strings.Repeat("a", n-len(head)-len(tail)) + tail)
	}
	cases := []struct {
		name   string
		h      func() int
		status int
		code   string
	}{
		{"body over 10 KB", func() int {
			return call(t, f.svc.HandleToolCall, alice, "POST", "/", []byte(big), s.SessionID).Code
		}, 413, ""},
		{"10,241 bytes", func() int { return call(t, f.svc.HandleToolCall, alice, "POST", "/", exact(10_241), s.SessionID).Code }, 413, ""},
		{"10,240 bytes", func() int { return call(t, f.svc.HandleToolCall, alice, "POST", "/", exact(10_240), s.SessionID).Code }, 422, ""},
		{"unknown tool", func() int {
			return call(t, f.svc.HandleToolCall, alice, "POST", "/", []byte(`{"call_id":"c1","name":"nope","arguments":"{}"}`), s.SessionID).Code
		}, 404, ""},
		{"tool not allowed in voice", func() int {
			return call(t, f.svc.HandleToolCall, alice, "POST", "/", []byte(`{"call_id":"c2","name":"private","arguments":"{}"}`), s.SessionID).Code
		}, 403, ""},
		{"arguments failing the schema", func() int {
			return call(t, f.svc.HandleToolCall, alice, "POST", "/", []byte(`{"call_id":"c3","name":"echo","arguments":"{\"q\":5}"}`), s.SessionID).Code
		}, 422, ""},
		{"another user's session: tool call", func() int {
			return call(t, f.svc.HandleToolCall, bob, "POST", "/", []byte(`{"call_id":"c4","name":"echo","arguments":"{}"}`), s.SessionID).Code
		}, 404, ""},
		{"another user's session: get", func() int { return call(t, f.svc.HandleGet, bob, "GET", "/", nil, s.SessionID).Code }, 404, ""},
		{"another user's session: end", func() int { return call(t, f.svc.HandleEnd, bob, "POST", "/", []byte(`{}`), s.SessionID).Code }, 404, ""},
		{"no such session", func() int {
			return call(t, f.svc.HandleGet, alice, "GET", "/", nil, "vs_000000000000000000000000").Code
		}, 404, ""},
		{"malformed id", func() int { return call(t, f.svc.HandleGet, alice, "GET", "/", nil, "x%00y").Code }, 404, ""},
		{"unknown end reason", func() int {
			return call(t, f.svc.HandleEnd, alice, "POST", "/", []byte(`{"reason":"bored"}`), s.SessionID).Code
		}, 400, ""},
		{"server reason from the app", func() int {
			return call(t, f.svc.HandleEnd, alice, "POST", "/", []byte(`{"reason":"expired"}`), s.SessionID).Code
		}, 400, ""},
		{"count above 1e12", func() int {
			return call(t, f.svc.HandleEnd, alice, "POST", "/", []byte(`{"usage":{"output_token_details":{"audio_tokens":1000000000001}}}`), s.SessionID).Code
		}, 422, ""},
		{"negative count", func() int {
			return call(t, f.svc.HandleEnd, alice, "POST", "/", []byte(`{"usage":{"input_token_details":{"text_tokens":-1}}}`), s.SessionID).Code
		}, 422, ""},
		{"fractional count", func() int {
			return call(t, f.svc.HandleEnd, alice, "POST", "/", []byte(`{"usage":{"input_tokens":1.5}}`), s.SessionID).Code
		}, 422, ""},
		{"count as a string", func() int {
			return call(t, f.svc.HandleEnd, alice, "POST", "/", []byte(`{"usage":{"output_tokens":"5"}}`), s.SessionID).Code
		}, 422, ""},
		{"unknown mode", func() int {
			return call(t, f.svc.HandleStart, bob, "POST", "/", []byte(`{"mode":"carrier-pigeon"}`), "").Code
		}, 400, ""},
		{"mode not built yet", func() int {
			return call(t, f.svc.HandleStart, bob, "POST", "/", []byte(`{"mode":"relay"}`), "").Code
		}, 400, ""},
		{"bad language", func() int {
			return call(t, f.svc.HandleStart, bob, "POST", "/", []byte(`{"language":"english"}`), "").Code
		}, 400, ""},
		{"unknown start field", func() int { return call(t, f.svc.HandleStart, bob, "POST", "/", []byte(`{"modle":"direct"}`), "").Code }, 400, ""},
	}
	for _, tc := range cases {
		if got := tc.h(); got != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.status)
		}
	}
	// None of the refused ends ended the session.
	if got := decode[controlplane.Session](t, call(t, f.svc.HandleGet, alice, "GET", "/", nil, s.SessionID)); !got.Active() {
		t.Fatalf("a refused end ended the session: %+v", got)
	}
}

// A second start while one is active names it; replace ends it (charged
// up to now) and starts anew.
func TestSecondStartAndReplace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	p := newUser(t, "free")
	first := mustStart(t, f, p, `{}`)
	w := call(t, f.svc.HandleStart, p, "POST", "/", []byte(`{}`), "")
	body := decode[errorBody](t, w)
	if w.Code != 429 || body.Error.Code != "CONCURRENT_LIMIT" || body.Error.SessionID != first.SessionID || w.Header().Get("Retry-After") == "" {
		t.Fatalf("second start: %d %s", w.Code, w.Body)
	}
	second := mustStart(t, f, p, `{"replace":true}`)
	old := decode[controlplane.Session](t, call(t, f.svc.HandleGet, p, "GET", "/", nil, first.SessionID))
	if old.Active() || *old.EndReason != "replaced" || old.Cost == nil || *old.ChargedS > 5 {
		t.Fatalf("replaced session %+v", old)
	}
	if second.SessionID == first.SessionID {
		t.Fatal("replace reused the session id")
	}
	list := decode[struct {
		Items []controlplane.Session `json:"items"`
	}](t, call(t, f.svc.HandleList, p, "GET", "/v1/voice/sessions?limit=10", nil, ""))
	if len(list.Items) != 2 || list.Items[0].ID != second.SessionID || list.Items[1].ID != first.SessionID {
		t.Fatalf("list %+v, want the two sessions newest first", list.Items)
	}
}

// A mint that fails gives its seconds back and leaves no session row.
func TestMintFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	p := newUser(t, "free")
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointRealtimeClientSecrets, Kind: sim.FaultServerError, Count: 1}); err != nil {
		t.Fatal(err)
	}
	w := call(t, f.svc.HandleStart, p, "POST", "/", []byte(`{}`), "")
	if w.Code != http.StatusServiceUnavailable || decode[errorBody](t, w).Error.Code != "AI_UNAVAILABLE" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("start with a failing provider: %d %s", w.Code, w.Body)
	}
	var rows, reserved int
	ctx := context.Background()
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM voice_sessions WHERE user_id = $1`, p.UserID).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d session rows (%v), want 0", rows, err)
	}
	if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM quota_voice WHERE user_id = $1`, p.UserID).Scan(&reserved); err != nil || reserved != 0 {
		t.Fatalf("%d reservations held (%v), want 0", reserved, err)
	}
	// The seconds are back: the next start gets a whole session.
	if s := mustStart(t, f, p, `{}`); s.MaxDurationS != 900 || *s.Quota.SecondsRemaining != 1800-900 {
		t.Fatalf("after the failure: max %d, remaining %d", s.MaxDurationS, *s.Quota.SecondsRemaining)
	}
}

// The metrics count what happened: a start, a tool call, an end, and the
// open sessions across replicas.
func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	f := newFixture(t, options{registry: reg})
	p := newUser(t, "pro")
	s := mustStart(t, f, p, `{}`)
	// gauge is the open sessions by mode, every mode sent.
	gauge := func() string {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "voxgate_voice_active_sessions" {
				var out []string
				for _, m := range mf.GetMetric() {
					out = append(out, fmt.Sprintf("%s=%v", m.GetLabel()[0].GetValue(), m.GetGauge().GetValue()))
				}
				return strings.Join(out, " ")
			}
		}
		return "absent"
	}
	if g, want := gauge(), "direct=0 live=0 relay=0 sideband=0"; s.Mode != "direct" || g != strings.Replace(want, "direct=0", "direct=1", 1) {
		t.Fatalf("a %s session open: active sessions %s", s.Mode, g)
	}
	call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(`{"call_id":"m1","name":"echo","arguments":"{}"}`), s.SessionID)
	call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{}`), s.SessionID)
	if g := gauge(); g != "direct=0 live=0 relay=0 sideband=0" {
		t.Fatalf("active sessions after the end %s, want 0 for every mode", g)
	}
	for name, want := range map[string]float64{
		`voxgate_voice_sessions_started_total`: 1, `voxgate_voice_sessions_ended_total`: 1, `voxgate_voice_tool_calls_total`: 1,
	} {
		if got := sumMetric(t, reg, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// sumMetric adds up every series of the counter name.
func sumMetric(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// A month with less than the minimum session left refuses the start with
// QUOTA_EXCEEDED and when the month resets; nothing is reserved.
func TestQuotaExhausted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	p := newUser(t, "free")
	s := mustStart(t, f, p, `{}`)
	if w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{}`), s.SessionID); w.Code != 200 {
		t.Fatalf("end: %d %s", w.Code, w.Body)
	}
	// The free plan's 1,800 s, all but 5 used.
	if _, err := f.pool.Exec(context.Background(), `UPDATE quota_users SET voice_used = 1795 WHERE user_id = $1`, p.UserID); err != nil {
		t.Fatal(err)
	}
	w := call(t, f.svc.HandleStart, p, "POST", "/", []byte(`{}`), "")
	var body struct {
		Error struct {
			Code     string `json:"code"`
			ResetsAt string `json:"resets_at"`
		} `json:"error"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != 429 || body.Error.Code != "QUOTA_EXCEEDED" || body.Error.ResetsAt == "" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("start with 5 s left: %d %s", w.Code, w.Body)
	}
	var open int
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM quota_voice WHERE user_id = $1`, p.UserID).Scan(&open); err != nil || open != 0 {
		t.Fatalf("%d reservations (%v), want 0", open, err)
	}
}

// In sideband mode the gateway reads the model's calls off the call: an
// app posting one is refused, and nothing runs.
func TestSidebandSessionRefusesPostedToolCalls(t *testing.T) {
	t.Parallel()
	var runs int64
	f := newFixture(t, options{runs: &runs})
	p := newUser(t, "pro")
	s := mustStart(t, f, p, `{"mode":"sideband"}`)
	w := call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(`{"call_id":"c1","name":"echo","arguments":"{}"}`), s.SessionID)
	if w.Code != 409 || decode[errorBody](t, w).Error.Code != "CONFLICT" || runs != 0 {
		t.Fatalf("posted tool call on a sideband session: %d %s, tool ran %d times", w.Code, w.Body, runs)
	}
}
