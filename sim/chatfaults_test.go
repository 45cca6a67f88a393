package sim_test

import (
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestFaultRefusals: context_length and content_filter refuse the request
// with 400 in the real API's shape, streaming or not, and openai-go reads
// the codes a gateway classifies by.
func TestFaultRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind              sim.FaultKind
		code, param       string
		messageStartsWith string
	}{
		{sim.FaultContextLength, "context_length_exceeded", "messages", "This model's maximum context length is"},
		{sim.FaultContentFilter, "content_policy_violation", "", "Your request was rejected as a result of our safety system"},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(string(c.kind)+map[bool]string{false: "/body", true: "/stream"}[stream], func(t *testing.T) {
				t.Parallel()
				_, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Kind: c.kind}}})
				client := simtest.Client(url)
				var err error
				if stream {
					st := client.Chat.Completions.NewStreaming(t.Context(), userParams(true))
					for st.Next() {
						t.Fatal("a chunk before the refusal")
					}
					err = st.Err()
				} else {
					_, err = client.Chat.Completions.New(t.Context(), userParams(false))
				}
				var apiErr *openai.Error
				if !errors.As(err, &apiErr) {
					t.Fatalf("got %v (%T), want an *openai.Error", err, err)
				}
				if apiErr.StatusCode != http.StatusBadRequest || apiErr.Type != "invalid_request_error" ||
					apiErr.Code != c.code || apiErr.Param != c.param || !strings.HasPrefix(apiErr.Message, c.messageStartsWith) {
					t.Errorf("got %d %s/%s param %q: %q", apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Param, apiErr.Message)
				}
			})
		}
	}
}

// TestFaultContentFilterStop: with after_chunks, the answer stops with
// finish_reason content_filter, and the usage and [DONE] follow.
func TestFaultContentFilterStop(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Text: "A long enough answer to be stopped part way."},
		Faults: []sim.Fault{{Kind: sim.FaultContentFilter, AfterChunks: 3}}})
	resp, body := post(t, url, simtest.TestKey, chatBody("gpt-4o", "hi", `"stream":true,"stream_options":{"include_usage":true}`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	data := sseData(t, body)
	// role, two text pieces, the stop, the usage, [DONE]
	if len(data) != 6 || data[5] != "[DONE]" || !strings.Contains(data[3], `"finish_reason":"content_filter"`) ||
		!strings.Contains(data[4], `"prompt_tokens"`) {
		t.Fatalf("events: got %q", data)
	}
}

// TestFaultNoDone: the whole answer and its usage, then a clean end
// without [DONE], which openai-go takes as the end of the stream.
func TestFaultNoDone(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Kind: sim.FaultNoDone}}})
	_, body := post(t, url, simtest.TestKey, chatBody("gpt-4o", "hi", `"stream":true,"stream_options":{"include_usage":true}`))
	data := sseData(t, body)
	if len(data) == 0 || data[len(data)-1] == "[DONE]" || !strings.Contains(data[len(data)-1], `"usage":{`) {
		t.Fatalf("events: got %q, want the usage last and no [DONE]", data)
	}
	_, url = testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Kind: sim.FaultNoDone}}})
	acc, _ := streamAll(t, simtest.Client(url), userParams(true))
	if acc.Usage.TotalTokens == 0 || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("openai-go: got usage %+v finish %q, want a whole answer", acc.Usage, acc.Choices[0].FinishReason)
	}
}

// TestFaultReset: the connection is dropped before any header; no status
// reaches the client.
func TestFaultReset(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Kind: sim.FaultReset}}})
	client := simtest.Client(url)
	_, err := client.Chat.Completions.New(t.Context(), userParams(false))
	var apiErr *openai.Error
	if err == nil || errors.As(err, &apiErr) {
		t.Fatalf("got %v, want a transport error without a status", err)
	}
	if !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("got %v, want a reset (or EOF)", err)
	}
	if got := s.Stats().Endpoints[sim.EndpointChatCompletions].FaultsByKind[sim.FaultReset]; got != 1 {
		t.Errorf("resets served: got %d, want 1", got)
	}
	// The next request is answered.
	if _, err := client.Chat.Completions.New(t.Context(), userParams(false)); err != nil {
		t.Errorf("after the reset: %v", err)
	}
}

// TestFaultSlowStart: the first chunk waits interval_ms, the answer is
// whole.
func TestFaultSlowStart(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Text: "Late but whole."},
		Faults: []sim.Fault{{Kind: sim.FaultSlowStart, IntervalMS: 300}}})
	client := simtest.Client(url)
	start := time.Now()
	st := client.Chat.Completions.NewStreaming(t.Context(), userParams(true))
	defer st.Close()
	if !st.Next() {
		t.Fatalf("no first chunk: %v", st.Err())
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("first chunk after %s, want at least 300ms", took)
	}
	var acc openai.ChatCompletionAccumulator
	acc.AddChunk(st.Current())
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if st.Err() != nil || acc.Choices[0].Message.Content != "Late but whole." {
		t.Errorf("got %q, %v", acc.Choices[0].Message.Content, st.Err())
	}
}
