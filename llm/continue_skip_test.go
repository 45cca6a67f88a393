package llm_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// inserting is a response writer that writes extra before the simulator's
// event number at (each event is one Write), as a proxy between gateway
// and provider that corrupts or adds an event would.
type inserting struct {
	http.ResponseWriter
	at, n int
	extra string
}

func (w *inserting) Write(b []byte) (int, error) {
	if w.n == w.at {
		if _, err := w.ResponseWriter.Write([]byte(w.extra)); err != nil {
			return 0, err
		}
	}
	w.n++
	return w.ResponseWriter.Write(b)
}

func (w *inserting) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// insertingUpstream serves u's simulator with extra inserted before the
// tenth event of the first chat stream, once.
func insertingUpstream(t *testing.T, u *recorded, extra string) string {
	t.Helper()
	var once atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sim.EndpointChatCompletions && once.CompareAndSwap(false, true) {
			w = &inserting{ResponseWriter: w, at: 9, extra: extra}
		}
		u.sim.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// An unreadable chunk that carried none of the answer (whole, naming none
// of the fields an answer comes in) is skipped and counted, and the stream
// goes on to its end on the same target. One that may have carried part
// of the answer (it names content) ends the attempt, and the answer is
// continued from what the caller has.
func TestUnreadableChunk(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, extra string
		trace       []string
		skipped     float64
	}{
		{name: "without any of the answer: skipped",
			extra: "data: {\"sim\":,\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\n",
			trace: []string{"primary/" + primaryModel + ":success"}, skipped: 1},
		{name: "cut inside a content chunk: continued",
			extra: "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"con\n\n",
			trace: []string{"primary/" + primaryModel + ":PROVIDER_INVALID_RESPONSE", "fallback/claude-haiku-4-5:success"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
			fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
			p := openaiTarget(t, "primary", primaryModel, primary, "")
			p.provider = newOpenAI(t, insertingUpstream(t, primary, c.extra)+"/v1", 0, nil)
			r, reg := contRouter(t, p, anthropicTarget(t, "fallback", "claude-haiku-4-5", fallback, llm.ContinuePrefill))
			res, _ := routedRead(t, r, ask())
			if res.err != nil || res.text != sixtyTokens {
				t.Fatalf("got %q, %v; want the whole answer", res.text, res.err)
			}
			if got := res.done.Trace.Strings(); !reflect.DeepEqual(got, c.trace) {
				t.Errorf("trace: got %v, want %v", got, c.trace)
			}
			g := gathered{reg, "voxgate_llm_skipped_chunks_total", map[string]string{"provider": "primary", "model": primaryModel}}
			if got := counted(g); got != c.skipped {
				t.Errorf("skipped chunks: got %v, want %v", got, c.skipped)
			}
		})
	}
}
