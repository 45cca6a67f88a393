package sim_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestUnknownParameters checks that top-level names the spec does not list
// are refused as the real API refuses them, and that the spec's own
// parameters are accepted (sim.TestChatParamsMatchSpec checks the whole
// list against the spec).
func TestUnknownParameters(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	_, url := testkit.NewSim(t, sim.Config{})
	tests := []struct {
		name, extra           string
		wantStatus            int
		wantParam, wantPrefix string
	}{
		{"unknown", `"foo":1`, 400, "foo", "Unrecognized request argument supplied: foo"},
		{"unknown even when null", `"foo":null`, 400, "foo", "Unrecognized request argument supplied: foo"},
		{"several, named in order", `"zeta":1,"alpha":{}`, 400, "alpha", "Unrecognized request arguments supplied: alpha, zeta"},
		{"names match exactly", `"Temperature":1`, 400, "Temperature", "Unrecognized request argument supplied: Temperature"},
		{"a Responses parameter", `"max_output_tokens":10`, 400, "max_output_tokens", "Unrecognized request argument supplied: max_output_tokens"},
		{"known and ignored", `"temperature":0.2,"top_p":1,"seed":7,"user":"u","metadata":{"a":"b"},"store":false,` +
			`"response_format":{"type":"text"},"logit_bias":{},"stop":"x","presence_penalty":0,"frequency_penalty":0,` +
			`"service_tier":"auto","prompt_cache_key":"k","safety_identifier":"s"`, 200, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, body := post(t, url, simtest.TestKey, chatBody("gpt-4o", "hi", tc.extra))
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status: got %d, want %d (%s)", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantStatus == 200 {
				return
			}
			typ, code, param, msg := apiError(t, body)
			if typ != "invalid_request_error" || code != "unknown_parameter" || param != tc.wantParam || msg != tc.wantPrefix {
				t.Errorf("got %s / %s param %q %q, want invalid_request_error / unknown_parameter param %q %q",
					typ, code, param, msg, tc.wantParam, tc.wantPrefix)
			}
			if err := spec.Validate("ErrorResponse", body); err != nil {
				t.Errorf("error body: %v", err)
			}
		})
	}

	// openai-go sends extra fields with WithJSONSet and reports the refusal.
	client := simtest.Client(url)
	_, err := client.Chat.Completions.New(t.Context(), userParams(false), option.WithJSONSet("foo", 1))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "unknown_parameter" || apiErr.Param != "foo" {
		t.Errorf("openai-go: got %v, want 400 unknown_parameter param foo", err)
	}
}

// TestModelSnapshots checks alias resolution and the models refusing
// max_tokens, with the defaults and with a config.
func TestModelSnapshots(t *testing.T) {
	t.Parallel()
	custom := sim.Chat{ModelAliases: map[string]string{"house": "house-2026-01-01"}, ReasoningModels: []string{"house"}}
	tests := []struct {
		name, model, extra string
		cfg                sim.Config
		wantStatus         int
		wantModel          string // or the error code
	}{
		{name: "alias answered by its snapshot", model: "gpt-4o", wantStatus: 200, wantModel: "gpt-4o-2024-08-06"},
		{name: "snapshot echoed", model: "gpt-4o-2024-11-20", wantStatus: 200, wantModel: "gpt-4o-2024-11-20"},
		{name: "unknown name echoed", model: "my-finetune", wantStatus: 200, wantModel: "my-finetune"},
		{name: "configured alias", model: "house", extra: `"max_completion_tokens":50`, cfg: sim.Config{Chat: custom}, wantStatus: 200, wantModel: "house-2026-01-01"},
		{name: "configured aliases replace the defaults", model: "gpt-4o", cfg: sim.Config{Chat: custom}, wantStatus: 200, wantModel: "gpt-4o"},
		{name: "no aliases", model: "gpt-4o", cfg: sim.Config{Chat: sim.Chat{ModelAliases: map[string]string{}}}, wantStatus: 200, wantModel: "gpt-4o"},
		{name: "listed alias allows its snapshot", model: "gpt-4o-2024-08-06", cfg: sim.Config{Models: []string{"gpt-4o"}}, wantStatus: 200, wantModel: "gpt-4o-2024-08-06"},
		{name: "listed snapshot allows its alias", model: "gpt-4o", cfg: sim.Config{Models: []string{"gpt-4o-2024-08-06"}}, wantStatus: 200, wantModel: "gpt-4o-2024-08-06"},
		{name: "unlisted model", model: "gpt-4o-mini", cfg: sim.Config{Models: []string{"gpt-4o"}}, wantStatus: 404, wantModel: "model_not_found"},
		{name: "reasoning model refuses max_tokens", model: "o3", extra: `"max_tokens":50`, wantStatus: 400, wantModel: "unsupported_parameter"},
		{name: "so does its snapshot", model: "o3-2025-04-16", extra: `"max_tokens":50`, wantStatus: 400, wantModel: "unsupported_parameter"},
		{name: "reasoning model takes max_completion_tokens", model: "o3", extra: `"max_completion_tokens":50`, wantStatus: 200, wantModel: "o3-2025-04-16"},
		{name: "other models take max_tokens", model: "gpt-4o", extra: `"max_tokens":50`, wantStatus: 200, wantModel: "gpt-4o-2024-08-06"},
		{name: "configured reasoning model", model: "house", extra: `"max_tokens":50`, cfg: sim.Config{Chat: custom}, wantStatus: 400, wantModel: "unsupported_parameter"},
		{name: "configured list replaces the defaults", model: "o3", extra: `"max_tokens":50`, cfg: sim.Config{Chat: custom}, wantStatus: 200, wantModel: "o3"},
		{name: "streamed chunks name the snapshot", model: "gpt-4o-mini", extra: `"stream":true`, wantStatus: 200, wantModel: "gpt-4o-mini-2024-07-18"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := testkit.NewSim(t, tc.cfg)
			resp, body := post(t, url, simtest.TestKey, chatBody(tc.model, "hi", tc.extra))
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status: got %d, want %d (%s)", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantStatus != 200 {
				if _, code, _, _ := apiError(t, body); code != tc.wantModel {
					t.Errorf("code: got %q, want %q", code, tc.wantModel)
				}
				return
			}
			objects := []string{string(body)}
			if strings.Contains(tc.extra, `"stream":true`) {
				events := sseData(t, body)
				objects = events[:len(events)-1]
			}
			for _, o := range objects {
				if !strings.Contains(o, `"model":"`+tc.wantModel+`"`) {
					t.Errorf("got %s, want model %s", o, tc.wantModel)
				}
			}
		})
	}

	_, url := testkit.NewSim(t, sim.Config{})
	p := userParams(false)
	p.Model = openai.ChatModelO3
	p.MaxTokens = openai.Int(50)
	client := simtest.Client(url)
	_, err := client.Chat.Completions.New(t.Context(), p)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "unsupported_parameter" || apiErr.Param != "max_tokens" {
		t.Errorf("openai-go: got %v, want 400 unsupported_parameter param max_tokens", err)
	}
}

// testClock is a settable clock for Config.Now.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestRateLimitHeaders checks the x-ratelimit-* headers of successive
// answers: usage per key, draining at the limit's rate.
func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	_, url := testkit.NewSim(t, sim.Config{Now: clock.Now, Script: sim.Script{Text: "Hello, world!"},
		Chat: sim.Chat{RateLimits: sim.RateLimits{RequestsPerMinute: 60, TokensPerMinute: 1000}}})
	// "hello" is 2 prompt tokens and "Hello, world!" 4 completion tokens: 6 a request.
	steps := []struct {
		name    string
		advance time.Duration
		key     string
		stream  bool
		want    [6]string // limit, remaining, reset: requests then tokens
	}{
		{"first", 0, "sk-a", false, [6]string{"60", "59", "1s", "1000", "994", "360ms"}},
		{"second, same instant", 0, "sk-a", true, [6]string{"60", "58", "2s", "1000", "988", "720ms"}},
		{"a second later, one request has drained", time.Second, "sk-a", false, [6]string{"60", "58", "2s", "1000", "994", "360ms"}},
		{"another key starts afresh", 0, "sk-b", false, [6]string{"60", "59", "1s", "1000", "994", "360ms"}},
	}
	names := []string{"Limit-Requests", "Remaining-Requests", "Reset-Requests", "Limit-Tokens", "Remaining-Tokens", "Reset-Tokens"}
	for _, st := range steps {
		clock.Advance(st.advance)
		extra := ""
		if st.stream {
			extra = `"stream":true`
		}
		resp, body := post(t, url, st.key, chatBody("gpt-4o", "hello", extra))
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d %s", st.name, resp.StatusCode, body)
		}
		for i, n := range names {
			if got := resp.Header.Get("X-Ratelimit-" + n); got != st.want[i] {
				t.Errorf("%s: x-ratelimit-%s: got %q, want %q", st.name, strings.ToLower(n), got, st.want[i])
			}
		}
	}

	// openai-go exposes them on the raw response.
	var raw *http.Response
	client := simtest.Client(url)
	if _, err := client.Chat.Completions.New(t.Context(), userParams(false), option.WithResponseInto(&raw)); err != nil {
		t.Fatal(err)
	}
	if got := raw.Header.Get("X-Ratelimit-Limit-Requests"); got != "60" {
		t.Errorf("openai-go response: x-ratelimit-limit-requests %q, want 60", got)
	}
}

// TestRequestIDOnEveryAnswer checks that successes and errors of every kind
// carry their own x-request-id.
func TestRequestIDOnEveryAnswer(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{Keys: []string{simtest.TestKey}, Models: []string{"gpt-4o"}})
	seen := map[string]bool{}
	check := func(name string, resp *http.Response, wantStatus int) {
		t.Helper()
		id := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != wantStatus || !strings.HasPrefix(id, "req_") || seen[id] {
			t.Errorf("%s: got %d x-request-id %q, want %d and a new req_ id", name, resp.StatusCode, id, wantStatus)
		}
		seen[id] = true
	}
	for _, tc := range []struct {
		name, key, body string
		fault           sim.FaultKind
		wantStatus      int
	}{
		{"answer", simtest.TestKey, chatBody("gpt-4o", "hi", ""), "", 200},
		{"stream", simtest.TestKey, chatBody("gpt-4o", "hi", `"stream":true`), "", 200},
		{"bad JSON", simtest.TestKey, `{`, "", 400},
		{"unknown parameter", simtest.TestKey, chatBody("gpt-4o", "hi", `"foo":1`), "", 400},
		{"bad key", "sk-nope", chatBody("gpt-4o", "hi", ""), "", 401},
		{"unknown model", simtest.TestKey, chatBody("gpt-3", "hi", ""), "", 404},
		{"rate limited", simtest.TestKey, chatBody("gpt-4o", "hi", ""), sim.FaultRateLimit, 429},
		{"out of quota", simtest.TestKey, chatBody("gpt-4o", "hi", ""), sim.FaultQuota, 429},
		{"server error", simtest.TestKey, chatBody("gpt-4o", "hi", ""), sim.FaultServerError, 500},
	} {
		if tc.fault != "" {
			if _, err := s.AddFault(sim.Fault{Kind: tc.fault}); err != nil {
				t.Fatal(err)
			}
		}
		resp, _ := post(t, url, tc.key, tc.body)
		check(tc.name, resp, tc.wantStatus)
	}
	resp, err := http.Get(url + "/v1/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	check("unknown route", resp, 404)
}
