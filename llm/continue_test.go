package llm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// The primary (OpenAI's surface) is cut after 40 of its 60 tokens; the
// fallback continues from the text the caller has, and the caller reads
// one answer: the primary's 40 tokens, then the fallback's 20, nothing
// repeated. Each kind of target that declares prefill: a Claude model
// before 4.6 (a trailing assistant message) and an OpenAI-compatible
// server that takes continue_final_message.
func TestContinueAfterCut(t *testing.T) {
	t.Parallel()
	cut := sixtyTokens[:40*4] // "t01 … t40 ": 40 chunks of 4 bytes
	for _, c := range []struct {
		name, path, model string
		fallback          func(t *testing.T, u *recorded) contTarget
		// extra are body members the continuation must carry.
		extra map[string]any
	}{
		{name: "claude-haiku-4-5", path: sim.EndpointAnthropicMessages, model: "claude-haiku-4-5",
			fallback: func(t *testing.T, u *recorded) contTarget {
				return anthropicTarget(t, "fallback", "claude-haiku-4-5", u, llm.ContinuePrefill)
			}},
		{name: "openai-compatible", path: sim.EndpointChatCompletions, model: "qwen3",
			fallback: func(t *testing.T, u *recorded) contTarget {
				return openaiTarget(t, "fallback", "qwen3", u, llm.ContinuePrefill)
			},
			extra: map[string]any{"continue_final_message": true, "add_generation_prompt": false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
			fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}, Chat: sim.Chat{ContinueFinalMessage: true}})
			primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultCutStream, AfterChunks: 41})
			r, reg := contRouter(t, openaiTarget(t, "primary", primaryModel, primary, ""), c.fallback(t, fallback))
			res, _ := routedRead(t, r, ask())
			if res.err != nil {
				t.Fatalf("got %v, want the whole answer", res.err)
			}
			if res.text != sixtyTokens {
				t.Errorf("text: got %q, want %q", res.text, sixtyTokens)
			}
			reqs := fallback.requests()
			if len(reqs) != 1 || reqs[0].path != c.path {
				t.Fatalf("fallback requests: %+v, want one on %s", reqs, c.path)
			}
			// The prefill is the text the caller has without its trailing
			// white space, which Anthropic refuses in a prefill; the
			// continuation's own leading space is dropped (the text above
			// has nothing doubled).
			if role, text := reqs[0].lastMessage(); role != "assistant" || text != strings.TrimRight(cut, " ") || text == cut {
				t.Errorf("the continuation ends with %s %q, want the assistant's %q without its trailing space", role, text, cut)
			}
			for k, v := range c.extra {
				if reqs[0].body[k] != v {
					t.Errorf("continuation body %s: got %v, want %v", k, reqs[0].body[k], v)
				}
			}
			// The fallback's usage is its own: the 20 tokens it wrote
			// (79 bytes, by hand), priced as its model.
			if u := res.done.Usage; u == nil || u.OutputTokens != 20 || u.Model != c.model {
				t.Errorf("usage: got %+v, want %s's 20 output tokens", u, c.model)
			}
			if res.done.FinishReason != llm.FinishStop {
				t.Errorf("finish reason: got %q, want stop", res.done.FinishReason)
			}
			tr := res.done.Trace
			want := []string{"primary/" + primaryModel + ":PROVIDER_NETWORK", "fallback/" + c.model + ":success"}
			if !reflect.DeepEqual(tr.Strings(), want) {
				t.Fatalf("trace: got %v, want %v", tr.Strings(), want)
			}
			if tr[0].Answered || tr[0].CutAt != len(cut) || !tr[1].Answered || !tr[1].Continues {
				t.Errorf("trace: got %+v, want the primary cut at %d and the fallback answering", tr, len(cut))
			}
			if a, _ := tr.Answered(); a.Model != c.model {
				t.Errorf("answered: got %s, want %s", a.Model, c.model)
			}
			if got := continuations(reg, "continued"); got != 1 {
				t.Errorf("continuations counted: %v, want 1", got)
			}
		})
	}
}

// The primary stalls after 20 of its tokens with the connection open: at
// its timeout between chunks the fallback continues, and the whole answer
// comes within that timeout and a slack, not at the route's budget. The
// timeout (1 s) is one a loaded machine's gaps between chunks stay under,
// and with the slack still below the 6 s budget.
func TestContinueAfterStall(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultTimeout, AfterChunks: 21})
	p := openaiTarget(t, "primary", primaryModel, primary, "")
	p.target.Timeout = timeout
	r, _ := contRouter(t, p, anthropicTarget(t, "fallback", "claude-haiku-4-5", fallback, llm.ContinuePrefill))
	res, took := routedRead(t, r, ask())
	if res.err != nil || res.text != sixtyTokens {
		t.Fatalf("got %q, %v; want the whole answer", res.text, res.err)
	}
	if took > timeout+slack {
		t.Errorf("took %s, want within the stall's %s and %s slack", took, timeout, slack)
	}
	if role, text := fallback.requests()[0].lastMessage(); role != "assistant" || text != strings.TrimRight(sixtyTokens[:20*4], " ") {
		t.Errorf("the continuation ends with %s %q, want the first 20 tokens without the trailing space", role, text)
	}
	if got := res.done.Trace.Strings(); !reflect.DeepEqual(got, []string{"primary/" + primaryModel + ":PROVIDER_TIMEOUT", "fallback/claude-haiku-4-5:success"}) {
		t.Errorf("trace: got %v", got)
	}
}

// The tenth event of an otherwise normal stream is not JSON: the caller
// still reads the whole answer, once.
func TestContinueAfterMalformedChunk(t *testing.T) {
	t.Parallel()
	primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultMalformedJSON, AfterChunks: 9})
	r, _ := contRouter(t, openaiTarget(t, "primary", primaryModel, primary, ""),
		anthropicTarget(t, "fallback", "claude-haiku-4-5", fallback, llm.ContinuePrefill))
	res, _ := routedRead(t, r, ask())
	if res.err != nil || res.text != sixtyTokens {
		t.Fatalf("got %q, %v; want the whole answer", res.text, res.err)
	}
}

// No target can continue: the one after the primary declares nothing and
// is never asked; OpenAI's own API, declared prefill by mistake, refuses
// continue_final_message with a 400; Claude from 4.6 on refuses the prefill
// with a 400. The answer ends with the error of the primary's cut, never a
// refusal, the refusals in the trace.
func TestContinueNowhere(t *testing.T) {
	t.Parallel()
	primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	plain := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	newer := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	openaiOwn := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultCutStream, AfterChunks: 41})
	r, reg := contRouter(t, openaiTarget(t, "primary", primaryModel, primary, ""),
		openaiTarget(t, "plain", fallbackModel, plain, ""),
		openaiTarget(t, "mistaken", fallbackModel, openaiOwn, llm.ContinuePrefill),
		anthropicTarget(t, "newer", "claude-haiku-5-5", newer, llm.ContinuePrefill))
	res, _ := routedRead(t, r, ask())
	var re *llm.RouteError
	var e *llm.Error
	if !errors.As(res.err, &re) || !errors.As(res.err, &e) {
		t.Fatalf("got %v, want a *llm.RouteError over an *llm.Error", res.err)
	}
	if re.Outcome != llm.RouteCut || !re.Committed || e.Provider != "openai" || e.Code != llm.ProviderNetwork || e.Status != 0 {
		t.Errorf("got outcome %d committed %v, %s %s %d; want the primary's cut", re.Outcome, re.Committed, e.Provider, e.Code, e.Status)
	}
	if res.text != sixtyTokens[:40*4] || res.done != nil {
		t.Errorf("text: got %q (done %v), want the 40 tokens before the cut and no end", res.text, res.done != nil)
	}
	if n := len(plain.requests()); n != 0 {
		t.Errorf("the target without prefill was asked %d times", n)
	}
	if a, b := len(openaiOwn.requests()), len(newer.requests()); a != 1 || b != 1 {
		t.Errorf("OpenAI's API asked %d times, claude-haiku-5-5 %d; want once each (both refuse)", a, b)
	}
	tr := re.Trace
	want := []string{"primary/" + primaryModel + ":PROVIDER_NETWORK", "mistaken/" + fallbackModel + ":UNKNOWN_PROVIDER_ERROR",
		"newer/claude-haiku-5-5:UNKNOWN_PROVIDER_ERROR"}
	if !reflect.DeepEqual(tr.Strings(), want) || tr[1].Status != 400 || tr[2].Status != 400 || !tr[0].Answered || tr[0].CutAt != 160 {
		t.Errorf("trace: got %v %+v, want %v with the refusal's 400", tr.Strings(), tr, want)
	}
	if got := continuations(reg, "none"); got != 1 {
		t.Errorf("continuations that found no target: %v, want 1", got)
	}
}

// A tool call cut mid-arguments is never delivered whole from the cut
// attempt: the continuation begins it again, the caller receives only the
// arguments beyond those it had, under the id it saw first, and the whole
// call once.
func TestContinueToolCallCut(t *testing.T) {
	t.Parallel()
	const args = `{"city":"Paris","when":"tomorrow morning","units":"metric"}`
	script := sim.Script{Rules: []sim.Rule{{Reply: sim.Reply{Text: "Let me check.",
		ToolCalls: []sim.ScriptCall{{Name: "get_weather", Arguments: args}}}}}}
	for _, c := range []struct {
		name     string
		fallback func(t *testing.T, u *recorded) contTarget
	}{
		{"claude-haiku-4-5", func(t *testing.T, u *recorded) contTarget {
			return anthropicTarget(t, "fallback", "claude-haiku-4-5", u, llm.ContinuePrefill)
		}},
		{"openai-compatible", func(t *testing.T, u *recorded) contTarget {
			return openaiTarget(t, "fallback", "qwen3", u, llm.ContinuePrefill)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			primary := newRecorded(t, sim.Config{Script: script})
			fallback := newRecorded(t, sim.Config{Script: script, Chat: sim.Chat{ContinueFinalMessage: true}})
			// The role frame, "Let me check." in 4 chunks, the call's
			// header, then 5 of its 15 argument pieces: 20 bytes.
			primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultCutStream, AfterChunks: 11})
			r, _ := contRouter(t, openaiTarget(t, "primary", primaryModel, primary, ""), c.fallback(t, fallback))
			req := ask()
			req.Tools = []llm.ToolSpec{weatherTool}
			res, _ := routedRead(t, r, req)
			if res.err != nil {
				t.Fatalf("got %v, want the answer with its call", res.err)
			}
			if res.text != "Let me check." {
				t.Errorf("text: got %q", res.text)
			}
			if len(res.calls) != 1 || res.calls[0].Name != "get_weather" || res.calls[0].Arguments != args {
				t.Fatalf("calls: got %+v, want get_weather(%s) once", res.calls, args)
			}
			// drain checked that the pieces under the call's id sum to it,
			// 20 bytes of them from the cut attempt: its id is the one the
			// cut attempt's first piece gave.
			if first := res.callDeltas[0].ToolCall; first.ID != res.calls[0].ID {
				t.Errorf("first piece %+v, the call %+v", first, res.calls[0])
			}
			if n := len(res.pieces); n != 1 {
				t.Errorf("pieces under %d calls, want 1", n)
			}
			if role, text := fallback.requests()[0].lastMessage(); role != "assistant" || text != "Let me check." {
				t.Errorf("the continuation ends with %s %q, want the text before the call", role, text)
			}
			if res.done.FinishReason != llm.FinishToolCalls {
				t.Errorf("finish reason: got %q, want tool_calls", res.done.FinishReason)
			}
		})
	}
}

// A continuation counts against the route's budget: an answer cut after
// the budget has run out is not continued (the fallback is traced
// budget_exhausted and never asked), and the cut stands.
func TestContinueWithinBudget(t *testing.T) {
	t.Parallel()
	primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultTimeout, AfterChunks: 21})
	p := openaiTarget(t, "primary", primaryModel, primary, "")
	// The stall shows at 1.5 s, after the route's 1 s budget.
	p.target.Timeout = 1500 * time.Millisecond
	r, _ := contRouterBudget(t, time.Second, p, anthropicTarget(t, "fallback", "claude-haiku-4-5", fallback, llm.ContinuePrefill))
	res, _ := routedRead(t, r, ask())
	var re *llm.RouteError
	var e *llm.Error
	if !errors.As(res.err, &re) || !errors.As(res.err, &e) || re.Outcome != llm.RouteCut || e.Code != llm.ProviderTimeout {
		t.Fatalf("got %v, want the primary's stall as a cut", res.err)
	}
	want := []string{"primary/" + primaryModel + ":PROVIDER_TIMEOUT", "fallback/claude-haiku-4-5:budget_exhausted"}
	if got := re.Trace.Strings(); !reflect.DeepEqual(got, want) {
		t.Errorf("trace: got %v, want %v", got, want)
	}
	if n := len(fallback.requests()); n != 0 {
		t.Errorf("the fallback was asked %d times after the budget", n)
	}
}
