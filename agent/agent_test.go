package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/llm"
)

// scripted answers each model call with the next of its responses and
// keeps the requests it got. It is the seam's contract in miniature: the
// loop's own rules are what these tests check; sim_test.go runs the loop
// against the simulator through the real adapter.
type scripted struct {
	responses [][]step
	reqs      []llm.Request
}

// step is one item of a response: an event, an error, or a panic.
type step struct {
	ev    llm.Event
	err   error
	panic bool
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Stream(_ context.Context, req llm.Request) (llm.Stream, error) {
	s.reqs = append(s.reqs, req)
	i := min(len(s.reqs), len(s.responses)) - 1
	return &scriptedStream{steps: s.responses[i]}, nil
}

type scriptedStream struct{ steps []step }

func (s *scriptedStream) Next(context.Context) (llm.Event, error) {
	if len(s.steps) == 0 {
		return llm.Event{}, io.EOF
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	if st.panic {
		panic("test: the provider panicked")
	}
	return st.ev, st.err
}

func (s *scriptedStream) Close() error { return nil }

func text(t string) step { return step{ev: llm.Event{Kind: llm.EventText, Text: t}} }

func call(id, name, args string) step {
	return step{ev: llm.Event{Kind: llm.EventToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: args}}}
}

func delta(index int, id, name, args string) step {
	return step{ev: llm.Event{Kind: llm.EventToolCallDelta, Index: index,
		ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: args}}}
}

func done(model string, in, cached, out int64) step {
	return step{ev: llm.Event{Kind: llm.EventDone, FinishReason: llm.FinishStop,
		Usage: &llm.Usage{Model: model, InputTokens: in, CachedInputTokens: cached, OutputTokens: out}}}
}

// host records what the loop asked of it.
type host struct {
	log   []string
	calls []llm.ToolCall
	said  []string
	stop  map[string]bool // call names that stop the loop
}

func (h *host) Progress(_ context.Context, p agent.Phase, done bool) error {
	h.log = append(h.log, fmt.Sprintf("progress %d %v", p, done))
	return nil
}

func (h *host) Text(_ context.Context, delta string) error {
	h.log = append(h.log, "text "+delta)
	return nil
}

func (h *host) Call(_ context.Context, c llm.ToolCall, said string) (agent.Outcome, error) {
	h.calls = append(h.calls, c)
	h.said = append(h.said, said)
	h.log = append(h.log, "call "+c.ID)
	if h.stop[c.Name] {
		return agent.Outcome{Stop: true}, nil
	}
	return agent.Outcome{Output: "output of " + c.ID}, nil
}

var specs = []llm.ToolSpec{{Name: "search", Parameters: []byte(`{"type":"object"}`)}, {Name: "log", Parameters: []byte(`{"type":"object"}`)}}

func request() llm.Request {
	return llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "find soup"}}, Tools: specs}
}

// A call streams as deltas and then arrives whole: only the whole call
// runs, once, under the id the seam minted, and the model reads its output
// under that id. The usage of both model calls is summed exactly.
func TestRunKeysCallsByIDAndIgnoresDeltas(t *testing.T) {
	p := &scripted{responses: [][]step{
		{text("Let me look. "), delta(0, "call_a", "search", `{"q":`), delta(0, "", "", `"soup"}`),
			call("call_a", "search", `{"q":"soup"}`), done("m-1", 100, 40, 7)},
		{text("Tomato soup."), done("m-2", 130, 0, 5)},
	}}
	h := &host{}
	res, err := agent.Run(context.Background(), p, request(), h)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 || h.calls[0].ID != "call_a" || h.calls[0].Arguments != `{"q":"soup"}` || h.said[0] != "Let me look. " {
		t.Fatalf("calls %+v said %q: want the one whole call_a, with the text said with it", h.calls, h.said)
	}
	if len(p.reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(p.reqs))
	}
	msgs := p.reqs[1].Messages
	if n := len(msgs); n != 3 || msgs[1].Role != llm.RoleAssistant || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].ID != "call_a" ||
		msgs[2].Role != llm.RoleTool || msgs[2].ToolCallID != "call_a" || msgs[2].Content != "output of call_a" {
		t.Fatalf("second call's messages %+v: want the assistant's call_a and its output", msgs)
	}
	want := agent.Usage{Usage: llm.Usage{Model: "m-2", InputTokens: 230, CachedInputTokens: 40, OutputTokens: 12}, Calls: 2}
	if !same(res.Usage, want) || len(res.Usage.Each) != 2 || res.Text != "Let me look. Tomato soup." || res.Stopped {
		t.Errorf("got %+v, want usage %+v and the whole text", res, want)
	}
	wantLog := []string{"progress 1 false", "progress 1 true", "text Let me look. ", "progress 2 false", "call call_a",
		"progress 2 true", "progress 1 false", "progress 1 true", "text Tomato soup."}
	if got := strings.Join(h.log, "|"); got != strings.Join(wantLog, "|") {
		t.Errorf("host saw\n%s\nwant\n%s", got, strings.Join(wantLog, "|"))
	}
	if len(p.reqs[0].Messages) != 1 {
		t.Errorf("the caller's messages grew to %d: the loop must work on its own copy", len(p.reqs[0].Messages))
	}
}

// A model that keeps calling tools gets MaxIterations calls: the first
// forced to the named tool, the last made with tool choice none.
func TestRunIterationCap(t *testing.T) {
	p := &scripted{responses: [][]step{{call("call_x", "search", `{}`), done("m", 10, 0, 1)}}}
	h := &host{}
	req := request()
	req.ToolChoice = "search"
	res, err := agent.Run(context.Background(), p, req, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.reqs) != agent.MaxIterations || len(h.calls) != agent.MaxIterations-1 {
		t.Fatalf("%d model calls, %d tool calls: want %d and %d", len(p.reqs), len(h.calls), agent.MaxIterations, agent.MaxIterations-1)
	}
	for i, r := range p.reqs {
		want := "auto"
		switch i {
		case 0:
			want = "search"
		case agent.MaxIterations - 1:
			want = "none"
		}
		if r.ToolChoice != want || len(r.Tools) != len(specs) {
			t.Errorf("call %d: tool choice %q with %d tools, want %q with all", i, r.ToolChoice, len(r.Tools), want)
		}
	}
	if res.Usage.Calls != agent.MaxIterations || res.Usage.InputTokens != 10*agent.MaxIterations {
		t.Errorf("usage %+v: want every call counted", res.Usage)
	}
}

// With no tools the model is called without a tool choice, once.
func TestRunWithoutTools(t *testing.T) {
	p := &scripted{responses: [][]step{{text("Hi."), done("m", 3, 0, 1)}}}
	req := request()
	req.Tools = nil
	if _, err := agent.Run(context.Background(), p, req, &host{}); err != nil {
		t.Fatal(err)
	}
	if len(p.reqs) != 1 || p.reqs[0].ToolChoice != "" || p.reqs[0].Tools != nil {
		t.Errorf("requests %+v: want one, with no tools and no choice", p.reqs)
	}
}

// A call that stops the loop (it waits for a confirmation) ends it: the
// response's later calls do not run, the model is not called again, and
// the working phase still ends.
func TestRunStopsAtACall(t *testing.T) {
	p := &scripted{responses: [][]step{{call("call_1", "log", `{}`), call("call_2", "search", `{}`), done("m", 10, 0, 1)}}}
	h := &host{stop: map[string]bool{"log": true}}
	res, err := agent.Run(context.Background(), p, request(), h)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || len(h.calls) != 1 || len(p.reqs) != 1 {
		t.Fatalf("stopped %v after %d calls and %d model calls: want a stop after the first, one model call", res.Stopped, len(h.calls), len(p.reqs))
	}
	if last := h.log[len(h.log)-1]; last != "progress 2 true" {
		t.Errorf("last host event %q, want the working phase's end", last)
	}
}

// A call cut before the provider reported is estimated at ceil(bytes/4)
// of what was sent and received, on top of what earlier calls reported,
// and the failure is the provider's *llm.Error.
func TestRunCutCallIsEstimated(t *testing.T) {
	cut := &llm.Error{Provider: "scripted", Code: llm.ProviderNetwork, Err: errors.New("reset")}
	p := &scripted{responses: [][]step{
		{call("call_1", "search", `{}`), done("m", 100, 0, 10)},
		{text("abcdefghi"), {err: cut}},
	}}
	res, err := agent.Run(context.Background(), p, request(), &host{})
	var le *llm.Error
	if !errors.As(err, &le) || le.Code != llm.ProviderNetwork {
		t.Fatalf("err %v, want the provider's *llm.Error", err)
	}
	in := 0
	for _, m := range p.reqs[1].Messages {
		in += len(m.Content)
		for _, c := range m.ToolCalls {
			in += len(c.Name) + len(c.Arguments)
		}
	}
	for _, s := range specs {
		in += len(s.Name) + len(s.Description) + len(s.Parameters)
	}
	want := agent.Usage{Usage: llm.Usage{Model: "m", InputTokens: 100 + int64((in+3)/4), OutputTokens: 10 + 3}, Calls: 2, Estimated: true}
	if !same(res.Usage, want) {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
}

// A call that failed after its provider reported the call's usage (the
// usage came, then the connection was cut) is counted as reported, not
// estimated, also behind a wrapping error such as the router's.
func TestRunFailureWithReportedUsage(t *testing.T) {
	cut := &llm.Error{Provider: "scripted", Code: llm.ProviderNetwork, Err: errors.New("reset"),
		Usage: &llm.Usage{Model: "m-2", InputTokens: 40, CachedInputTokens: 8, OutputTokens: 7}}
	p := &scripted{responses: [][]step{
		{call("call_1", "search", `{}`), done("m", 100, 0, 10)},
		{text("abcdefghi"), {err: fmt.Errorf("route: %w", cut)}},
	}}
	res, err := agent.Run(context.Background(), p, request(), &host{})
	var le *llm.Error
	if !errors.As(err, &le) || le.Code != llm.ProviderNetwork {
		t.Fatalf("err %v, want the provider's *llm.Error", err)
	}
	want := agent.Usage{Usage: llm.Usage{Model: "m-2", InputTokens: 140, CachedInputTokens: 8, OutputTokens: 17}, Calls: 2}
	if !same(res.Usage, want) || len(res.Usage.Each) != 2 {
		t.Errorf("usage %+v, want %+v: both calls as reported", res.Usage, want)
	}
}

// A provider that fails with something other than an *llm.Error breaks
// the seam's contract; the loop reports it as unavailable.
func TestRunForeignErrorIsUnavailable(t *testing.T) {
	p := &scripted{responses: [][]step{{{err: errors.New("boom")}}}}
	_, err := agent.Run(context.Background(), p, request(), &host{})
	var le *llm.Error
	if !errors.As(err, &le) || le.Code != llm.ProviderUnavailable {
		t.Fatalf("err %v, want PROVIDER_UNAVAILABLE", err)
	}
}

// A stream that ends without its finish is an invalid response, and its
// call is estimated.
func TestRunStreamWithoutFinish(t *testing.T) {
	p := &scripted{responses: [][]step{{text("half")}}}
	res, err := agent.Run(context.Background(), p, request(), &host{})
	var le *llm.Error
	if !errors.As(err, &le) || le.Code != llm.ProviderInvalidResponse {
		t.Fatalf("err %v, want PROVIDER_INVALID_RESPONSE", err)
	}
	if !res.Usage.Estimated || res.Usage.OutputTokens != 1 || res.Text != "half" {
		t.Errorf("result %+v: want the cut call estimated and its text kept", res)
	}
}

// A panic in the provider ends the loop with an error and the usage of
// the calls already made, so the caller can still settle them.
func TestRunPanicKeepsUsage(t *testing.T) {
	p := &scripted{responses: [][]step{
		{call("call_1", "search", `{}`), done("m", 100, 0, 10)},
		{{panic: true}},
	}}
	res, err := agent.Run(context.Background(), p, request(), &host{})
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("err %v, want the panic as an error", err)
	}
	if res.Usage.Calls != 2 || res.Usage.InputTokens != 100 || res.Usage.OutputTokens != 10 {
		t.Errorf("usage %+v: want both calls counted and the first's tokens", res.Usage)
	}
}

// A host's error ends the loop and comes back unchanged.
func TestRunHostErrorComesBack(t *testing.T) {
	gone := errors.New("client gone")
	p := &scripted{responses: [][]step{{text("Hi"), done("m", 1, 0, 1)}}}
	res, err := agent.Run(context.Background(), p, request(), failingText{gone})
	if !errors.Is(err, gone) {
		t.Fatalf("err %v, want the host's", err)
	}
	if !res.Usage.Estimated || res.Usage.Calls != 1 {
		t.Errorf("usage %+v: want the call cut by the host estimated", res.Usage)
	}
}

type failingText struct{ err error }

func (failingText) Progress(context.Context, agent.Phase, bool) error { return nil }
func (f failingText) Text(context.Context, string) error              { return f.err }
func (failingText) Call(context.Context, llm.ToolCall, string) (agent.Outcome, error) {
	return agent.Outcome{}, nil
}

// A call that arrives without an id (an adapter that mints none) gets
// one, so the model can read its output.
func TestRunMintsAMissingID(t *testing.T) {
	p := &scripted{responses: [][]step{{call("", "search", `{}`), done("m", 1, 0, 1)}, {text("ok"), done("m", 1, 0, 1)}}}
	h := &host{}
	if _, err := agent.Run(context.Background(), p, request(), h); err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 || !strings.HasPrefix(h.calls[0].ID, "call_") || p.reqs[1].Messages[2].ToolCallID != h.calls[0].ID {
		t.Fatalf("calls %+v, messages %+v: want a minted id, used for the output", h.calls, p.reqs[1].Messages)
	}
}

// same compares two usages' totals, their per-call lists left out.
func same(u, v agent.Usage) bool {
	return u.Usage == v.Usage && u.Calls == v.Calls && u.Estimated == v.Estimated
}
