package sim_test

import (
	"context"
	"encoding/json"
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

func userParams(stream bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
	}
	if stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

// TestFaultStatuses checks the faults that replace the response, as seen by
// openai-go, streaming or not.
func TestFaultStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		fault          sim.Fault
		wantStatus     int
		wantType       string
		wantCode       string
		wantRetryAfter string
	}{
		{"rate limit", sim.Fault{Kind: sim.FaultRateLimit}, 429, "requests", "rate_limit_exceeded", ""},
		{"rate limit with retry-after", sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 7}, 429, "requests", "rate_limit_exceeded", "7"},
		{"quota", sim.Fault{Kind: sim.FaultQuota, RetryAfter: 7}, 429, "insufficient_quota", "insufficient_quota", ""},
		{"server error", sim.Fault{Kind: sim.FaultServerError}, 500, "server_error", "", ""},
		{"unavailable", sim.Fault{Kind: sim.FaultUnavailable}, 503, "server_error", "", ""},
		{"unavailable with retry-after", sim.Fault{Kind: sim.FaultUnavailable, RetryAfter: 2}, 503, "server_error", "", "2"},
	}
	for _, tc := range tests {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += " streaming"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s, url := testkit.NewSim(t, sim.Config{})
				if _, err := s.AddFault(tc.fault); err != nil {
					t.Fatal(err)
				}
				client := simtest.Client(url)
				var err error
				if stream {
					st := client.Chat.Completions.NewStreaming(t.Context(), userParams(true))
					for st.Next() {
						t.Errorf("got a chunk, want none")
					}
					err = st.Err()
				} else {
					_, err = client.Chat.Completions.New(t.Context(), userParams(false))
				}
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) {
					t.Fatalf("error: got %v, want *openai.Error", err)
				}
				if apiErr.StatusCode != tc.wantStatus || apiErr.Type != tc.wantType || apiErr.Code != tc.wantCode {
					t.Errorf("got %d %q %q, want %d %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Code, tc.wantStatus, tc.wantType, tc.wantCode)
				}
				h := apiErr.Response.Header
				if got := h.Get("Retry-After"); got != tc.wantRetryAfter {
					t.Errorf("retry-after: got %q, want %q", got, tc.wantRetryAfter)
				}
				if got := h.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
					t.Errorf("x-request-id: got %q, want req_…", got)
				}
				// Only the rate limit says the requests are used up.
				wantRemaining := ""
				if tc.fault.Kind == sim.FaultRateLimit {
					wantRemaining = "0"
				}
				if got := h.Get("X-Ratelimit-Remaining-Requests"); got != wantRemaining {
					t.Errorf("x-ratelimit-remaining-requests: got %q, want %q", got, wantRemaining)
				}
				// The fault was for one request: the next one succeeds.
				if _, err := client.Chat.Completions.New(t.Context(), userParams(false)); err != nil {
					t.Errorf("request after the fault: %v", err)
				}
				st := s.Stats().Endpoints[sim.EndpointChatCompletions]
				if st.Requests != 2 || st.FaultsServed != 1 || st.FaultsByKind[tc.fault.Kind] != 1 {
					t.Errorf("stats: got %+v, want 2 requests, 1 %s fault", st, tc.fault.Kind)
				}
			})
		}
	}
}

// TestFaultTimeout checks that a hung request is seen as cancelled by the
// client, soon after the client's deadline. The deadline (1 s) counts from
// before the dial, so it leaves room for the dial and the first chunks on
// a loaded machine.
func TestFaultTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fault  sim.Fault
		stream bool
		chunks int
	}{
		{"before answering", sim.Fault{Kind: sim.FaultTimeout}, false, 0},
		{"stream stalls after chunks", sim.Fault{Kind: sim.FaultTimeout, AfterChunks: 2}, true, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{tc.fault}})
			client := simtest.Client(url)
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			var err error
			chunks := 0
			if tc.stream {
				st := client.Chat.Completions.NewStreaming(ctx, userParams(true))
				for st.Next() {
					chunks++
				}
				err = st.Err()
			} else {
				_, err = client.Chat.Completions.New(ctx, userParams(false))
			}
			gaveUp := time.Now()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("error: got %v, want context.DeadlineExceeded", err)
			}
			if chunks != tc.chunks {
				t.Errorf("chunks before the stall: got %d, want %d", chunks, tc.chunks)
			}
			st := testkit.WaitCancelled(t, s, sim.EndpointChatCompletions)
			if lag := st.LastCancelledAt.Sub(gaveUp); lag > 2*time.Second {
				t.Errorf("cancellation noticed %v after the client gave up, want within 2s", lag)
			}
			// At least half the deadline (the rest is the dial and the
			// chunks), at most the deadline and the 2 s allowed for noticing.
			if st.LastCancelAfterMS < 500 || st.LastCancelAfterMS > 3000 {
				t.Errorf("request ran %d ms before cancel, want about 1000", st.LastCancelAfterMS)
			}
		})
	}
}

// TestFaultBrokenBodies checks faults that damage a 200 response.
func TestFaultBrokenBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		fault      sim.Fault
		stream     bool
		wantChunks int
		wantErr    func(error) bool
	}{
		{"malformed json", sim.Fault{Kind: sim.FaultMalformedJSON}, false, 0, isSyntaxError},
		{"malformed json in stream", sim.Fault{Kind: sim.FaultMalformedJSON, AfterChunks: 3}, true, 3, isSyntaxError},
		{"cut body", sim.Fault{Kind: sim.FaultCutStream}, false, 0, isUnexpectedEOF},
		{"cut stream", sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 3}, true, 3, isUnexpectedEOF},
		{"cut stream before first chunk", sim.Fault{Kind: sim.FaultCutStream}, true, 0, isUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{tc.fault}})
			client := simtest.Client(url)
			var err error
			chunks := 0
			if tc.stream {
				st := client.Chat.Completions.NewStreaming(t.Context(), userParams(true))
				for st.Next() {
					chunks++
				}
				err = st.Err()
			} else {
				_, err = client.Chat.Completions.New(t.Context(), userParams(false))
			}
			if !tc.wantErr(err) {
				t.Errorf("error: got %v (%T)", err, err)
			}
			if chunks != tc.wantChunks {
				t.Errorf("chunks: got %d, want %d", chunks, tc.wantChunks)
			}
		})
	}
}

func isSyntaxError(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se)
}

func isUnexpectedEOF(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }

// TestFaultSlowDrip checks that a dripped response is slow but complete.
func TestFaultSlowDrip(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "body", true: "stream"}[stream], func(t *testing.T) {
			t.Parallel()
			_, url := testkit.NewSim(t, sim.Config{
				Script: sim.Script{Text: "Four tokens of text"},
				Faults: []sim.Fault{{Kind: sim.FaultSlowDrip, IntervalMS: 20}},
			})
			client := simtest.Client(url)
			start := time.Now()
			var content string
			if stream {
				acc, _ := streamAll(t, client, userParams(true))
				content = acc.Choices[0].Message.Content
			} else {
				got, err := client.Chat.Completions.New(t.Context(), userParams(false))
				if err != nil {
					t.Fatal(err)
				}
				content = got.Choices[0].Message.Content
			}
			// 8 pieces of body, or 9 chunks (role, 5 text, finish, usage) + [DONE].
			if took := time.Since(start); took < 150*time.Millisecond {
				t.Errorf("took %v, want at least 150ms of drip", took)
			}
			if content != "Four tokens of text" {
				t.Errorf("content: got %q", content)
			}
		})
	}
}

// TestFaultScope checks count, model scoping and fractions.
func TestFaultScope(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{Seed: 42})
	client := simtest.Client(url)
	send := func(model string) int {
		p := userParams(false)
		p.Model = model
		_, err := client.Chat.Completions.New(t.Context(), p)
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			return apiErr.StatusCode
		}
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return 200
	}
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointChatCompletions, Model: "gpt-4o-mini", Kind: sim.FaultServerError, Count: 2}); err != nil {
		t.Fatal(err)
	}
	got := []int{send("gpt-4o"), send("gpt-4o-mini"), send("gpt-4o"), send("gpt-4o-mini"), send("gpt-4o-mini")}
	want := []int{200, 500, 200, 500, 200}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses: got %v, want %v", got, want)
		}
	}

	if _, err := s.AddFault(sim.Fault{Kind: sim.FaultRateLimit, Fraction: 0.5}); err != nil {
		t.Fatal(err)
	}
	limited := 0
	const n = 200
	for range n {
		if send("gpt-4o") == 429 {
			limited++
		}
	}
	if limited < n/4 || limited > 3*n/4 {
		t.Errorf("fraction 0.5: got %d of %d limited", limited, n)
	}
	if len(s.Faults()) != 1 {
		t.Errorf("a fraction-only fault stays until cleared: got %d active, want 1", len(s.Faults()))
	}
	s.ClearFaults()
	if got := send("gpt-4o"); got != 200 {
		t.Errorf("after clear: got %d, want 200", got)
	}
}

// TestFaultAPI drives /sim/faults and /sim/stats over HTTP.
func TestFaultAPI(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), method, url+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantBody                 string // substring
	}{
		{"add one", "POST", "/sim/faults", `{"endpoint":"/v1/chat/completions","kind":"rate_limit","count":2,"retry_after":3}`, 201, `"id":"fault_1"`},
		{"add several", "POST", "/sim/faults", `[{"kind":"cut_stream","after_chunks":2},{"kind":"slow_drip","fraction":0.1}]`, 201, `"interval_ms":1000`},
		{"list", "GET", "/sim/faults", ``, 200, `"fault_3"`},
		{"unknown kind", "POST", "/sim/faults", `{"kind":"explode"}`, 400, `unknown fault kind`},
		{"unknown endpoint", "POST", "/sim/faults", `{"endpoint":"/v1/nope","kind":"rate_limit"}`, 400, `unknown endpoint`},
		{"unknown field", "POST", "/sim/faults", `{"kind":"cut_stream","after_chunk":2}`, 400, `after_chunk`},
		{"bad fraction", "POST", "/sim/faults", `{"kind":"timeout","fraction":2}`, 400, `fraction`},
		{"bad batch adds nothing", "POST", "/sim/faults", `[{"kind":"timeout"},{"kind":"nope"}]`, 400, `[1]`},
		{"still three", "GET", "/sim/faults", ``, 200, `"fault_3"`},
		{"clear", "DELETE", "/sim/faults", ``, 204, ``},
		{"empty", "GET", "/sim/faults", ``, 200, `{"faults":[]}`},
		{"stats", "GET", "/sim/stats", ``, 200, `"/v1/chat/completions":{"requests":0`},
		{"reset stats", "DELETE", "/sim/stats", ``, 204, ``},
	}
	for _, tc := range tests { // in order: each step builds on the last
		status, body := do(tc.method, tc.path, tc.body)
		if status != tc.wantStatus || !strings.Contains(body, tc.wantBody) {
			t.Errorf("%s: got %d %s, want %d containing %s", tc.name, status, body, tc.wantStatus, tc.wantBody)
		}
	}
}
