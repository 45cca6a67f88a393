package llm_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// newSim starts a simulator and returns it with its API base URL.
func newSim(t *testing.T, cfg sim.Config) (*sim.Server, string) {
	t.Helper()
	s, url := testkit.NewSim(t, cfg)
	return s, url + "/v1"
}

// newRootSim is newSim returning the simulator's root URL, which is what
// ANTHROPIC_BASE_URL names and genai takes as its base URL: their SDKs
// append the API's path themselves.
func newRootSim(t *testing.T, cfg sim.Config) (*sim.Server, string) {
	t.Helper()
	s, url := newSim(t, cfg)
	return s, strings.TrimSuffix(url, "/v1")
}

// recorder keeps the bodies of the requests a provider sends.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recorder) last(t *testing.T) []byte {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bodies) == 0 {
		t.Fatal("no request was sent")
	}
	return r.bodies[len(r.bodies)-1]
}

func newOpenAI(t *testing.T, baseURL string, timeout time.Duration, rt http.RoundTripper) *openai.OpenAI {
	t.Helper()
	p := openai.Params{BaseURL: baseURL, APIKey: simtest.TestKey, Timeout: timeout}
	if rt != nil {
		p.HTTPClient = &http.Client{Transport: rt}
	}
	o, err := openai.New(p)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return o
}

func userRequest(model, text string) llm.Request {
	return llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// result is a whole stream, read to its end or its first error.
type result struct {
	text   string
	deltas int // text deltas
	// callDeltas are the EventToolCallDeltas, in order.
	callDeltas []llm.Event
	calls      []llm.ToolCall
	// pieces are the tool-call deltas, by index.
	pieces map[int][]llm.ToolCall
	done   *llm.Event
	err    error
	// order lists the kinds in the order they came.
	order []llm.EventKind
}

// drain reads s until io.EOF or an error, checking the stream's promises:
// EventDone comes last, then io.EOF again and again.
func drain(t *testing.T, s llm.Stream) result {
	t.Helper()
	defer s.Close()
	var r result
	// Bounded, so a stream that never ends fails the test instead of
	// hanging it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		ev, err := s.Next(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if r.done == nil {
					t.Error("io.EOF before EventDone")
				}
				if _, again := s.Next(ctx); !errors.Is(again, io.EOF) {
					t.Errorf("Next after io.EOF: got %v, want io.EOF", again)
				}
				return r
			}
			r.err = err
			return r
		}
		if r.done != nil {
			t.Fatalf("event %+v after EventDone", ev)
		}
		if ev.Kind != llm.EventToolCallDelta {
			r.order = append(r.order, ev.Kind)
		}
		switch ev.Kind {
		case llm.EventText:
			r.text += ev.Text
			r.deltas++
		case llm.EventToolCall:
			checkPieces(t, r.pieces, *ev.ToolCall)
			r.calls = append(r.calls, *ev.ToolCall)
		case llm.EventToolCallDelta:
			r.callDeltas = append(r.callDeltas, ev)
			if r.pieces == nil {
				r.pieces = map[int][]llm.ToolCall{}
			}
			r.pieces[ev.Index] = append(r.pieces[ev.Index], *ev.ToolCall)
		case llm.EventDone:
			r.done = &ev
		default:
			t.Fatalf("unknown event kind %d", ev.Kind)
		}
	}
}

// checkPieces asserts that a whole call is the sum of the deltas sent
// before it: the first piece of its index carries its id and name, and the
// arguments are the pieces' fragments in order.
func checkPieces(t *testing.T, pieces map[int][]llm.ToolCall, call llm.ToolCall) {
	t.Helper()
	for _, ps := range pieces {
		if len(ps) == 0 || ps[0].ID != call.ID {
			continue
		}
		var name, args string
		for _, p := range ps {
			name += p.Name
			args += p.Arguments
		}
		if name != call.Name || args != call.Arguments {
			t.Errorf("call %s: pieces sum to %s(%s), the call is %s(%s)", call.ID, name, args, call.Name, call.Arguments)
		}
		return
	}
	t.Errorf("call %+v: no delta carried its id first", call)
}

// asError unwraps an *llm.Error or fails the test.
func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *llm.Error", err, err)
	}
	if e.Provider != "openai" {
		t.Errorf("provider: got %q, want openai", e.Provider)
	}
	return e
}

// stubUpstream serves one canned event stream, for answers the simulator
// does not give (a content filter, a stream without its finish).
func stubUpstream(t *testing.T, events ...string) string {
	t.Helper()
	return stubServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, "data: "+e+"\n\n")
		}
	})
}

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"stub-1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

const usageChunk = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"stub-1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`

// stubServer serves h and returns its API base URL.
func stubServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}
