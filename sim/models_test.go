package sim_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// day is a clock standing still at noon UTC of the given date.
func day(date string) func() time.Time {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		panic(err)
	}
	return func() time.Time { return t.Add(12 * time.Hour) }
}

func TestListModelsShutdownDates(t *testing.T) {
	t.Parallel()
	_, base := testkit.NewSim(t, sim.Config{ShutdownDates: sim.DefaultShutdownDates()})
	client := simtest.Client(base)
	page, err := client.Models.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]openai.Model{}
	for _, m := range page.Data {
		got[m.ID] = m
	}
	cases := []struct {
		model, want string // want "" means null
	}{
		{"gpt-5-mini", "2026-12-11"},
		{"gpt-4.1-mini", "2027-01-14"},
		{"gpt-realtime", "2027-01-20"},
		{"gpt-4o-mini-transcribe", "2027-02-26"},
		{"gpt-5-mini-2025-08-07", "2026-12-11"}, // a snapshot takes its family's date
		{"gpt-6-luna", ""},
		{"gpt-realtime-2.1", ""},
		{"gpt-realtime-whisper", ""},
	}
	for _, tc := range cases {
		m, ok := got[tc.model]
		if !ok {
			t.Errorf("%s: not listed", tc.model)
			continue
		}
		date := ""
		if m.JSON.ShutdownDate.Valid() {
			date = m.ShutdownDate.Format(time.DateOnly)
		}
		if date != tc.want || m.Object != "model" || m.OwnedBy == "" {
			t.Errorf("%s: got shutdown %q (object %q, owned_by %q), want %q", tc.model, date, m.Object, m.OwnedBy, tc.want)
		}
	}
	spec := simtest.Spec(t)
	resp, body := do(t, http.MethodGet, base+"/v1/models", simtest.TestKey, "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/models: %d %s", resp.StatusCode, body)
	}
	if err := spec.Validate("ListModelsResponse", body); err != nil {
		t.Fatalf("the list does not match the spec: %v", err)
	}
	if resp, _ := do(t, http.MethodGet, base+"/v1/models", "", "", nil); resp.StatusCode != 401 {
		t.Fatalf("without a key: got %d, want 401", resp.StatusCode)
	}
}

// The configured models, when set, are what the list holds.
func TestListModelsConfigured(t *testing.T) {
	t.Parallel()
	_, base := testkit.NewSim(t, sim.Config{Models: []string{"gpt-b", "gpt-a"}, ShutdownDates: map[string]string{"gpt-a": "2030-01-02"}})
	client := simtest.Client(base)
	page, err := client.Models.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID+"="+m.JSON.ShutdownDate.Raw())
	}
	if got, want := strings.Join(ids, ","), `gpt-a="2030-01-02",gpt-b=null`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// From its shutdown date on, a model is model_not_found on every endpoint
// that takes one; the day before, it is served.
func TestRetiredModelRefused(t *testing.T) {
	t.Parallel()
	dates := map[string]string{"gpt-old-chat": "2026-12-11", "gpt-old-realtime": "2027-01-20"}
	spec := simtest.Spec(t)
	type endpoint struct {
		name string
		call func(t *testing.T, base string) (*http.Response, []byte)
	}
	chat := func(model string) func(t *testing.T, base string) (*http.Response, []byte) {
		return func(t *testing.T, base string) (*http.Response, []byte) {
			return post(t, base, simtest.TestKey, chatBody(model, "hi", ""))
		}
	}
	endpoints := []endpoint{
		{"chat completions", chat("gpt-old-chat")},
		{"chat completions, snapshot", chat("gpt-old-chat-2025-08-07")},
		{"client secrets", func(t *testing.T, base string) (*http.Response, []byte) {
			body := `{"session":{"type":"realtime","model":"gpt-old-realtime"}}`
			return do(t, http.MethodPost, base+"/v1/realtime/client_secrets", simtest.TestKey, "application/json", []byte(body))
		}},
		{"realtime calls", func(t *testing.T, base string) (*http.Response, []byte) {
			offer, err := simtest.NewCaller(t).Offer(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			body, ctype := simtest.CallForm(offer, `{"type":"realtime","model":"gpt-old-realtime"}`)
			return do(t, http.MethodPost, base+"/v1/realtime/calls", simtest.TestKey, ctype, body)
		}},
		{"realtime websocket", func(t *testing.T, base string) (*http.Response, []byte) {
			ws, resp, err := simtest.DialSocket(testCtx(t), base, simtest.TestKey, "model=gpt-old-realtime")
			if err == nil {
				ws.Close()
				return &http.Response{StatusCode: http.StatusSwitchingProtocols}, nil
			}
			if resp == nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			return resp, b
		}},
	}
	days := []struct {
		name, today string
		refused     bool
	}{
		{"the day before", "2026-12-10", false},
		{"on the date", "2026-12-11", true},
		{"after it", "2027-03-01", true},
	}
	for _, d := range days {
		_, base := testkit.NewSim(t, sim.Config{ShutdownDates: dates, Now: day(d.today)})
		for _, ep := range endpoints {
			t.Run(d.name+"/"+ep.name, func(t *testing.T) {
				resp, body := ep.call(t, base)
				realtimeLater := strings.HasPrefix(ep.name, "realtime") || ep.name == "client secrets"
				if !d.refused || (realtimeLater && d.today < "2027-01-20") {
					if resp.StatusCode >= 300 && resp.StatusCode != http.StatusSwitchingProtocols {
						t.Fatalf("got %d %s, want the model served", resp.StatusCode, body)
					}
					return
				}
				assertAPIError(t, spec, ep.name, resp, body, http.StatusNotFound, "model_not_found", "model")
			})
		}
	}
}

func TestReasoningEffortRules(t *testing.T) {
	t.Parallel()
	_, base := testkit.NewSim(t, sim.Config{})
	tool := `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]`
	cases := []struct {
		name, model, extra string
		status             int
	}{
		{"luna, tools, no effort", "gpt-6-luna", tool, 400},
		{"luna, tools, low effort", "gpt-6-luna", tool + `,"reasoning_effort":"low"`, 400},
		{"luna, tools, effort none", "gpt-6-luna", tool + `,"reasoning_effort":"none"`, 200},
		{"luna, no tools, low effort", "gpt-6-luna", `"reasoning_effort":"low"`, 200},
		{"sol, effort none", "gpt-6.2-sol", `"reasoning_effort":"none"`, 400},
		{"sol, tools, no effort", "gpt-6.2-sol", tool, 200},
		{"terra, tools, effort none", "gpt-6.1-terra", tool + `,"reasoning_effort":"none"`, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, base, simtest.TestKey, chatBody(tc.model, "hi", tc.extra))
			if resp.StatusCode != tc.status {
				t.Fatalf("got %d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if tc.status == 400 {
				if _, code, param, _ := apiError(t, body); code != "unsupported_value" || param != "reasoning_effort" {
					t.Fatalf("got code %q param %q, want unsupported_value on reasoning_effort", code, param)
				}
			}
		})
	}
}

// A model with its own time to first token stays silent that long; the
// others answer at the common one.
func TestPerModelTTFT(t *testing.T) {
	t.Parallel()
	_, base := testkit.NewSim(t, sim.Config{Latency: &sim.Latency{ModelTTFT: map[string]time.Duration{"gpt-slow": time.Hour}}})
	client := simtest.Client(base)
	cases := []struct {
		model  string
		silent bool
	}{
		{"gpt-fast", false},
		{"gpt-slow", true},
		{"gpt-slow-2026-01-02", true}, // the family's setting covers a snapshot
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			// The silent models are given a quarter of a second against their
			// hour; the fast one is given testkit.Wait, since on a loaded
			// machine its first chunk can take longer than a quarter second.
			wait := testkit.Wait
			if tc.silent {
				wait = 250 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model: tc.model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
			defer s.Close()
			got := s.Next()
			if tc.silent {
				if got || !errors.Is(s.Err(), context.DeadlineExceeded) {
					t.Fatalf("got a chunk (%v, err %v), want silence until the deadline", got, s.Err())
				}
				return
			}
			if !got {
				t.Fatalf("no first chunk: %v", s.Err())
			}
		})
	}
}

// The models that bill cache writes report the prompt tokens a request
// newly writes to the cache, apart from the cached ones; others send no
// cache_write_tokens.
func TestCacheWriteTokens(t *testing.T) {
	t.Parallel()
	_, base := testkit.NewSim(t, sim.Config{})
	client := simtest.Client(base)
	// 1,252 prompt tokens, 9 whole 128-token blocks: 1,152 cacheable.
	params := func(model, system string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(system), openai.UserMessage("hello")}}
	}
	longer := longSystem + strings.Repeat("wxyz", 256) // two blocks more
	cases := []struct {
		name, model, system   string
		cached, written       int64
		writeFieldInTheAnswer bool
	}{
		{"first prompt: all written", "gpt-6-luna", longSystem, 0, 1152, true},
		{"the same prompt: all cached", "gpt-6-luna", longSystem, 1152, 0, true},
		{"a longer one: the rest written", "gpt-6-luna", longer, 1152, 256, true},
		{"a model that bills none", "gpt-4o", longSystem, 0, 0, false},
	}
	for _, tc := range cases { // in order: each step sees the cache the last left
		c, err := client.Chat.Completions.New(t.Context(), params(tc.model, tc.system))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d := c.Usage.PromptTokensDetails
		if d.CachedTokens != tc.cached || d.CacheWriteTokens != tc.written || d.JSON.CacheWriteTokens.Valid() != tc.writeFieldInTheAnswer {
			t.Errorf("%s: got cached %d, written %d (field sent %v); want %d, %d (%v)", tc.name,
				d.CachedTokens, d.CacheWriteTokens, d.JSON.CacheWriteTokens.Valid(), tc.cached, tc.written, tc.writeFieldInTheAnswer)
		}
		if d.CachedTokens+d.CacheWriteTokens > c.Usage.PromptTokens {
			t.Errorf("%s: cached and written exceed the prompt's %d tokens", tc.name, c.Usage.PromptTokens)
		}
	}
}
