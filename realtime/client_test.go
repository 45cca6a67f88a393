package realtime_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

func newClient(t *testing.T, cfg sim.Config, timeout time.Duration) (*sim.Server, *realtime.Client) {
	t.Helper()
	s, ts := simtest.NewServer(t, cfg)
	noRetry := 0
	c, err := realtime.New(realtime.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey, Timeout: timeout, MaxRetries: &noRetry})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func session() realtime.Session {
	return realtime.Session{
		Model: "gpt-realtime", Voice: "marin", Instructions: "You are a cooking assistant. Diet: vegetarian.",
		Tools: []realtime.Tool{{Name: "search_recipes", Description: "Search recipes",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}},
		TranscriptionModel: "gpt-4o-mini-transcribe", Language: "en",
	}
}

// A minted secret is usable: the call it opens carries the whole session
// config (instructions, voice, tools, transcription) the gateway chose.
func TestMintCarriesTheSession(t *testing.T) {
	t.Parallel()
	_, c := newClient(t, sim.Config{Latency: simtest.ZeroLatency()}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := time.Now()
	sec, err := c.Mint(ctx, session(), 45*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sec.Value, "ek_") || sec.Model == "" {
		t.Fatalf("secret %+v", sec)
	}
	if d := sec.ExpiresAt.Sub(before); d < 44*time.Second || d > 47*time.Second {
		t.Fatalf("expires in %v, want about 45 s", d)
	}
	if !strings.HasSuffix(c.CallsURL(), "/v1/realtime/calls") || !strings.HasPrefix(c.CallsURL(), "http") {
		t.Fatalf("calls URL %q", c.CallsURL())
	}
	caller := simtest.NewCaller(t)
	base := strings.TrimSuffix(c.CallsURL(), "/v1/realtime/calls")
	if _, err := caller.Dial(ctx, base, sec.Value); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := caller.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != "session.created" {
			continue
		}
		raw := string(ev.Raw)
		for _, want := range []string{`"search_recipes"`, `"marin"`, `Diet: vegetarian`, `"gpt-4o-mini-transcribe"`} {
			if !strings.Contains(raw, want) {
				t.Errorf("session.created lacks %s: %s", want, raw)
			}
		}
		return
	}
}

// The TTL is clamped to the API's range and DESIGN §6's 60 s cap.
func TestMintClampsTTL(t *testing.T) {
	t.Parallel()
	_, c := newClient(t, sim.Config{Latency: simtest.ZeroLatency()}, 0)
	for _, tc := range []struct{ ask, want time.Duration }{{time.Hour, 60 * time.Second}, {time.Second, 10 * time.Second}} {
		before := time.Now()
		sec, err := c.Mint(context.Background(), session(), tc.ask)
		if err != nil {
			t.Fatal(err)
		}
		if d := sec.ExpiresAt.Sub(before); d < tc.want-time.Second || d > tc.want+2*time.Second {
			t.Errorf("asked %v: expires in %v, want about %v", tc.ask, d, tc.want)
		}
	}
}

// Every provider failure arrives as the one error type with an AI_* code.
func TestMintNormalizesFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault  sim.Fault
		want   apierr.Code
		status int
		retry  int
	}{
		{sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 7}, apierr.AIRateLimited, 429, 7},
		{sim.Fault{Kind: sim.FaultServerError}, apierr.AIUnavailable, 503, 1},
		{sim.Fault{Kind: sim.FaultUnavailable}, apierr.AIUnavailable, 503, 1},
		{sim.Fault{Kind: sim.FaultTimeout}, apierr.AIUnavailable, 503, 1},
	}
	for _, tc := range cases {
		t.Run(string(tc.fault.Kind), func(t *testing.T) {
			t.Parallel()
			s, c := newClient(t, sim.Config{Latency: simtest.ZeroLatency()}, 2*time.Second)
			tc.fault.Endpoint = sim.EndpointRealtimeClientSecrets
			if _, err := s.AddFault(tc.fault); err != nil {
				t.Fatal(err)
			}
			_, err := c.Mint(context.Background(), session(), time.Minute)
			e := apierr.From(err)
			if e.Code != tc.want || e.Status() != tc.status {
				t.Fatalf("error %v: code %s status %d, want %s %d", err, e.Code, e.Status(), tc.want, tc.status)
			}
			if tc.retry > 0 && e.RetryAfter != tc.retry {
				t.Fatalf("retry after %d, want %d", e.RetryAfter, tc.retry)
			}
			if strings.Contains(e.Message, "sk-") || strings.Contains(e.Message, "realtime:") {
				t.Fatalf("message leaks internals: %q", e.Message)
			}
		})
	}
}

// Answers the simulator does not offer on this endpoint, from a stand-in
// provider: an account out of credit and a body that does not decode.
func TestMintNormalizesOtherAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
		want   apierr.Code
	}{
		{"insufficient_quota", 429, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, apierr.AIConfigError},
		{"malformed", 200, `{"value": "ek_1", "expires_at": `, apierr.AIParseError},
		{"no value", 200, `{"expires_at": 1, "session": {"type": "realtime"}}`, apierr.AIParseError},
		{"bad request", 400, `{"error":{"message":"Unknown parameter.","type":"invalid_request_error","param":"session.x","code":"unknown_parameter"}}`, apierr.AIConfigError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer ts.Close()
			noRetry := 0
			c, err := realtime.New(realtime.Params{BaseURL: ts.URL + "/v1", APIKey: "sk-x", MaxRetries: &noRetry})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Mint(context.Background(), session(), time.Minute)
			if e := apierr.From(err); e.Code != tc.want {
				t.Fatalf("error %v: code %s, want %s", err, e.Code, tc.want)
			}
		})
	}
}

// A wrong key is the operator's problem: AI_CONFIG_ERROR, never 401 to
// the app (which would make it sign the user out).
func TestMintWithRefusedKey(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Keys: []string{"sk-the-right-one"}})
	c, err := realtime.New(realtime.Params{BaseURL: ts.URL + "/v1", APIKey: "sk-wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Mint(context.Background(), session(), time.Minute)
	if e := apierr.From(err); e.Code != apierr.AIConfigError || e.Status() != http.StatusBadGateway {
		t.Fatalf("error %v, want AI_CONFIG_ERROR 502", err)
	}
}

// A caller that leaves gets its own cancellation back, not an AI_* error
// to log as the provider's fault.
func TestMintCallerGone(t *testing.T) {
	t.Parallel()
	s, c := newClient(t, sim.Config{Latency: simtest.ZeroLatency()}, 5*time.Second)
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointRealtimeClientSecrets, Kind: sim.FaultTimeout}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := c.Mint(ctx, session(), time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestNewRefusesBadParams(t *testing.T) {
	t.Parallel()
	for _, p := range []realtime.Params{{}, {BaseURL: "https://x"}, {APIKey: "k"}, {BaseURL: "ftp://x", APIKey: "k"}} {
		if _, err := realtime.New(p); err == nil {
			t.Errorf("New(%+v) accepted", p)
		}
	}
}
