package completions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/sim"
)

// An answer cut after commit is finished on the fallback that declares
// prefill (docs/llm.md, "Continuation"): openai-go reads one whole answer,
// the same text an uncut answer has, nothing repeated; the fallback was
// asked to continue the text the client already had; the ledger's record
// names the model that finished, and the audit row's trace has both
// attempts. A route whose fallback declares nothing keeps the cut as the
// error (TestCompletionsInStreamError).
func TestCompletionsContinueACutAnswer(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	whole := c.stream(t, "u-whole", "solo", "Tell me a story")
	if whole.err != nil || len(whole.acc.Choices) != 1 {
		t.Fatalf("the uncut answer: %v", whole.err)
	}
	want := whole.acc.Choices[0].Message.Content

	c.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 40})
	got := c.stream(t, "u-cut", "continued", "Tell me a story")
	if got.err != nil || len(got.acc.Choices) != 1 {
		t.Fatalf("the cut answer: %v (%+v)", got.err, got.acc.Choices)
	}
	if text := got.acc.Choices[0].Message.Content; text != want {
		t.Fatalf("the client read %q\nwant the uncut answer %q", text, want)
	}
	if fr := got.acc.Choices[0].FinishReason; fr != "stop" {
		t.Errorf("finish_reason %q, want stop", fr)
	}
	asked := c.fallback.requests()
	if len(asked) != 1 || !strings.Contains(asked[0], `"continue_final_message":true`) ||
		!strings.Contains(asked[0], `"role":"assistant"`) {
		t.Fatalf("the fallback was asked %d times: %v", len(asked), asked)
	}

	// The primary wrote what the client read before the cut, and its
	// provider bills it: an attempt record, estimated (it reported none).
	row := testgraph.OneAuditRow(t, c.pool, "u-cut")
	if len(row.FailoverTrace) != 2 || !strings.HasPrefix(row.FailoverTrace[0].Entry, "primary/") || row.FailoverTrace[0].CutAt == 0 ||
		row.FailoverTrace[1].Entry != "fallback/"+fallbackModel+":success" || !row.FailoverTrace[1].Continues {
		t.Fatalf("failover trace %+v: want the primary's cut with its cut point, then the fallback's continuation", row.FailoverTrace)
	}
	recs := c.records(t, "u-cut")
	if len(recs) != 2 {
		t.Fatalf("records %+v: want the cut attempt's and the answer's", recs)
	}
	cut, answer := recs[0], recs[1]
	if cut.Kind != billing.KindAttempt || cut.Provider != "primary" || cut.UsageSource != billing.SourceServerObserved ||
		cut.Usage.TextIn == 0 || cut.Usage.TextOut != int64((row.FailoverTrace[0].CutAt+3)/4) || cut.CostMicros == nil || *cut.CostMicros == 0 {
		t.Errorf("the cut attempt's record %+v: want kind attempt, the primary, estimated from its %d bytes, priced", cut, row.FailoverTrace[0].CutAt)
	}
	if answer.Kind != billing.KindCompletion || answer.Provider != "fallback" || !strings.HasPrefix(answer.Model, fallbackModel) ||
		answer.UsageSource != billing.SourceProviderReported {
		t.Errorf("the answer's record %+v: want a completion named for the fallback, as reported", answer)
	}
	// The client is told the whole answer's usage: what it read from the
	// primary (as that attempt's record counts it) and the continuation.
	if u := got.acc.Usage; u.CompletionTokens != cut.Usage.TextOut+answer.Usage.TextOut || u.PromptTokens != answer.Usage.TextIn ||
		u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v: want completion_tokens %d + %d, prompt_tokens %d (the continuation's)", u, cut.Usage.TextOut, answer.Usage.TextOut, answer.Usage.TextIn)
	}
}

// A stall after commit (the primary stops sending with its connection
// open) and an unreadable tenth chunk are finished on the fallback too:
// the client reads the uncut answer, nothing raised.
func TestCompletionsContinueAStallAndAnUnreadableChunk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault sim.Fault
	}{
		{"stall after 20 chunks", sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 21}},
		{"an unreadable tenth chunk", sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1, AfterChunks: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newComplFixture(t)
			whole := c.stream(t, "u-whole", "continued", "Tell me a story")
			if whole.err != nil || len(whole.acc.Choices) != 1 {
				t.Fatalf("the uncut answer: %v", whole.err)
			}
			c.primary.fault(t, tc.fault)
			got := c.stream(t, "u-faulted", "continued", "Tell me a story")
			if got.err != nil || len(got.acc.Choices) != 1 || got.acc.Choices[0].Message.Content != whole.acc.Choices[0].Message.Content {
				t.Fatalf("err %v; read %+v\nwant %q", got.err, got.acc.Choices, whole.acc.Choices[0].Message.Content)
			}
			if n := len(c.fallback.requests()); n != 1 {
				t.Errorf("the fallback was asked %d times, want once", n)
			}
		})
	}
}

// A client reading the whole answer (stream false) gets the cut answer
// finished too: the gateway asks the provider whole, so a cut body fails
// before anything is sent and the route's ordinary failover answers.
func TestCompletionsCutWholeAnswer(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	c.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 40})
	resp, err := c.client("u-cut-whole", "").Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "continued", Messages: ask("Tell me a story")})
	if err != nil {
		t.Fatal(err)
	}
	if text := resp.Choices[0].Message.Content; !strings.HasPrefix(text, "Hi. Once upon a time ") || resp.Model != fallbackModel {
		t.Fatalf("model %s, text %q", resp.Model, text)
	}
}

// A tool call cut mid-arguments is never given to the client half-made:
// the fallback's continuation makes the call again, and openai-go reads
// the text and one whole call, once, with the arguments the model meant.
func TestCompletionsContinueACutToolCall(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	// The role frame, "Checking. " in 3 chunks of 4 bytes, the call's
	// header, then two of its four argument pieces (sim/openai/stream.go).
	c.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 7})
	ctx := context.Background()
	st := c.client("u-cut-call", "").Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "continued", Messages: ask("what is the weather?"), Tools: []openai.ChatCompletionToolUnionParam{weatherTool}})
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil || len(acc.Choices) != 1 {
		t.Fatalf("err %v, choices %+v", err, acc.Choices)
	}
	calls := acc.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris"}` ||
		acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("calls %+v, finish %q: want one whole get_weather call for Paris", calls, acc.Choices[0].FinishReason)
	}
	asked := c.fallback.requests()
	if len(asked) != 1 || strings.Contains(asked[0], `"tool_calls"`) {
		t.Fatalf("the fallback was asked %v: want once, with no half-made call in it", asked)
	}
}
