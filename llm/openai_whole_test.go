package llm_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// TestOpenAIWholeAnswer: a whole call (Request.Whole) is one non-streamed
// request, and its answer comes out as the events a stream gives: the
// text, each tool call with a minted id, the finish reason and the usage
// the response reported.
func TestOpenAIWholeAnswer(t *testing.T) {
	t.Parallel()
	reply := sim.Reply{Text: "Let me look.", ToolCalls: []sim.ScriptCall{
		{Name: "find_recipes", Arguments: map[string]any{"query": "soup"}},
		{Name: "log_meal", Arguments: `{"meal":"tomato soup, two bowls"}`},
	}}
	s, url := newSim(t, sim.Config{Script: sim.Script{Rules: []sim.Rule{{Name: "calls", Reply: reply}}}})
	rec := &recorder{}
	req := userRequest("gpt-4o-mini", "find me something")
	req.Tools = []llm.ToolSpec{recipeTool, mealTool}
	req.Whole = true
	st, err := newOpenAI(t, url, 0, rec).Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r := drain(t, st)
	if r.err != nil {
		t.Fatalf("stream: %v", r.err)
	}
	var sent map[string]any
	if err := json.Unmarshal(rec.last(t), &sent); err != nil {
		t.Fatal(err)
	}
	if _, ok := sent["stream"]; ok {
		t.Errorf("the request sent stream=%v, want no stream", sent["stream"])
	}
	if _, ok := sent["stream_options"]; ok {
		t.Error("the request sent stream_options, which the API refuses without stream")
	}
	if r.text != "Let me look." || r.deltas != 1 {
		t.Errorf("text: got %q in %d deltas, want the whole text once", r.text, r.deltas)
	}
	want := []llm.ToolCall{{Name: "find_recipes", Arguments: `{"query":"soup"}`},
		{Name: "log_meal", Arguments: `{"meal":"tomato soup, two bowls"}`}}
	if len(r.calls) != len(want) {
		t.Fatalf("calls: got %+v, want %d", r.calls, len(want))
	}
	for i, c := range r.calls {
		if c.Name != want[i].Name || c.Arguments != want[i].Arguments || len(c.ID) < 10 {
			t.Errorf("call %d: got %+v, want %s(%s) with a minted id", i, c, want[i].Name, want[i].Arguments)
		}
	}
	if len(r.callDeltas) != 2 {
		t.Errorf("call deltas: got %d, want one a call (the router's commit point)", len(r.callDeltas))
	}
	d := r.done
	if d.FinishReason != llm.FinishToolCalls || d.Usage == nil || d.Usage.Model != "gpt-4o-mini-2024-07-18" {
		t.Fatalf("done: %+v, want tool_calls with usage for the dated snapshot", d)
	}
	if want := int64((len("find me something") + 3) / 4); d.Usage.InputTokens < want || d.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v, want the reported counts", *d.Usage)
	}
	if got := s.Stats().Endpoints[sim.EndpointChatCompletions]; got.Requests != 1 {
		t.Errorf("sim requests: %d, want 1", got.Requests)
	}
}

// TestOpenAIWholeBodyErrors: a whole answer that is not JSON is an invalid
// response, and a body cut halfway a network failure, both before any
// event, where the router may still retry or fail over.
func TestOpenAIWholeBodyErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault sim.FaultKind
		code  llm.Code
	}{
		{sim.FaultMalformedJSON, llm.ProviderInvalidResponse},
		{sim.FaultCutStream, llm.ProviderNetwork},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			t.Parallel()
			_, url := newSim(t, sim.Config{Script: sim.Script{Text: answer},
				Faults: []sim.Fault{{Kind: tc.fault, Endpoint: sim.EndpointChatCompletions}}})
			req := userRequest("gpt-4o-mini", "hello")
			req.Whole = true
			st, err := newOpenAI(t, url, 0, nil).Stream(t.Context(), req)
			e, ok := err.(*llm.Error)
			if st != nil || !ok || e.Code != tc.code {
				t.Fatalf("got %v, %v; want a %s error before any event", st, err, tc.code)
			}
		})
	}
}

// TestRouterWholeAnswerDeadline: a whole call's first byte is its whole
// answer, so the router waits first content plus its answer time for it,
// not first content alone; a hung target still fails over once that has
// passed.
func TestRouterWholeAnswerDeadline(t *testing.T) {
	t.Parallel()
	const answerTime = time.Second
	newRouter := func(primary, fallback *upstream) *llm.Router {
		r, err := llm.NewRouter(llm.RouterParams{
			Providers: map[string]llm.Provider{
				"primary":  newOpenAI(t, primary.url, 0, nil),
				"fallback": newOpenAI(t, fallback.url, 0, nil),
			},
			Routes: []llm.Route{{Name: "chat", Budget: testBudget, Targets: []llm.Target{
				{Provider: "primary", Model: primaryModel, FirstContent: 500 * time.Millisecond},
				{Provider: "fallback", Model: fallbackModel, FirstContent: 500 * time.Millisecond},
			}}},
			RetryDelay: testRetryDelay, AnswerTime: answerTime,
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("slower than first content, within the answer time", func(t *testing.T) {
		t.Parallel()
		h := &harness{primary: newUpstream(t), fallback: newUpstream(t)}
		h.router = newRouter(h.primary, h.fallback)
		h.primary.fault(t, sim.Fault{Kind: sim.FaultSlowStart, IntervalMS: 900})
		req := ask()
		req.Whole = true
		got := h.call(t, req)
		if got.err != nil || got.text != routedAnswer {
			t.Fatalf("got %q, %v; want the primary's answer", got.text, got.err)
		}
		if tr := got.trace(); len(tr) != 1 || tr[0].Provider != "primary" {
			t.Errorf("trace %+v, want the primary alone", tr)
		}
		if n := len(h.fallback.hits()); n != 0 {
			t.Errorf("the fallback was called %d times", n)
		}
	})
	t.Run("hung", func(t *testing.T) {
		t.Parallel()
		h := &harness{primary: newUpstream(t), fallback: newUpstream(t)}
		h.router = newRouter(h.primary, h.fallback)
		h.primary.fault(t, sim.Fault{Kind: sim.FaultTimeout})
		req := ask()
		req.Whole = true
		got := h.call(t, req)
		if got.err != nil || got.text != routedAnswer {
			t.Fatalf("got %q, %v; want the fallback's answer", got.text, got.err)
		}
		tr := got.trace()
		if len(tr) != 2 || tr[0].Outcome != string(llm.ProviderTimeout) || tr[1].Provider != "fallback" {
			t.Errorf("trace %+v, want the primary's timeout, then the fallback", tr)
		}
		// The deadline is 1.5 s after the attempt began; arrivals are
		// stamped at the simulators, so the gap between them may fall a
		// little short of it. A stream's deadline would have sent the
		// call on after 0.5 s.
		if hits := h.fallback.hits(); len(hits) != 1 || hits[0].Sub(h.primary.hits()[0]) < 1200*time.Millisecond {
			t.Errorf("fallback called at %v, want once, after first content plus the answer time", hits)
		}
	})
}
