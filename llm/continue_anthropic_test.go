package llm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// An Anthropic primary cut mid-answer is continued on an OpenAI-compatible
// server: the other way round from TestContinueAfterCut, the same one
// answer.
func TestContinueFromAnthropic(t *testing.T) {
	t.Parallel()
	primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}, Chat: sim.Chat{ContinueFinalMessage: true}})
	// message_start, ping, the text block's start, then 40 text deltas.
	primary.fault(t, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultCutStream, AfterChunks: 43})
	r, _ := contRouter(t, anthropicTarget(t, "primary", "claude-haiku-5-5", primary, ""),
		openaiTarget(t, "fallback", "qwen3", fallback, llm.ContinuePrefill))
	res, _ := routedRead(t, r, ask())
	if res.err != nil || res.text != sixtyTokens {
		t.Fatalf("got %q, %v; want the whole answer", res.text, res.err)
	}
	if role, text := fallback.requests()[0].lastMessage(); role != "assistant" || text != strings.TrimRight(sixtyTokens[:40*4], " ") {
		t.Errorf("the continuation ends with %s %q, want the first 40 tokens without the trailing space", role, text)
	}
	want := []string{"primary/claude-haiku-5-5:PROVIDER_NETWORK", "fallback/qwen3:success"}
	if got := res.done.Trace.Strings(); !reflect.DeepEqual(got, want) {
		t.Errorf("trace: got %v, want %v", got, want)
	}
}

// Anthropic releases each tool call whole at its block's end. Once one has
// reached the caller, which may run it, a cut in the next call is not
// continued: a prefill cannot hold a call without its result. The cut is
// the error, the whole call was delivered once, the fallback never asked.
func TestNoContinuationAfterAWholeCall(t *testing.T) {
	t.Parallel()
	script := sim.Script{Rules: []sim.Rule{{Reply: sim.Reply{Text: "Let me check.", ToolCalls: []sim.ScriptCall{
		{Name: "get_weather", Arguments: `{"city":"Paris"}`}, {Name: "get_weather", Arguments: `{"city":"Rome"}`}}}}}}
	primary := newRecorded(t, sim.Config{Script: script})
	fallback := newRecorded(t, sim.Config{Script: script, Chat: sim.Chat{ContinueFinalMessage: true}})
	// message_start, ping, the text block (start, 4 deltas, stop), the
	// first call (start, 4 deltas, stop), the second's start and 2 deltas.
	primary.fault(t, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultCutStream, AfterChunks: 17})
	r, _ := contRouter(t, anthropicTarget(t, "primary", "claude-haiku-4-5", primary, ""),
		openaiTarget(t, "fallback", "qwen3", fallback, llm.ContinuePrefill))
	req := ask()
	req.Tools = []llm.ToolSpec{weatherTool}
	res, _ := routedRead(t, r, req)
	var re *llm.RouteError
	if !errors.As(res.err, &re) || re.Outcome != llm.RouteCut {
		t.Fatalf("got %v, want the cut", res.err)
	}
	if len(res.calls) != 1 || res.calls[0].Arguments != `{"city":"Paris"}` {
		t.Errorf("calls: got %+v, want the first, whole, once", res.calls)
	}
	if n := len(fallback.requests()); n != 0 {
		t.Errorf("the fallback was asked %d times", n)
	}
}
