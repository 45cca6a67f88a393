package completions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/sim"
)

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("The weather in a city."),
	Parameters: shared.FunctionParameters{"type": "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
})

// day is the user's settled day and open tickets.
type day struct{ requests, calls, tokens, cost, tickets int64 }

func (c *complFixture) day(t testing.TB, user string) day {
	t.Helper()
	var d day
	err := c.pool.QueryRow(context.Background(), `SELECT coalesce(max(day_requests), 0), coalesce(max(day_calls), 0),
		coalesce(max(day_tokens), 0), coalesce(max(day_cost), 0),
		(SELECT count(*) FROM quota_tickets WHERE user_id = $1) FROM quota_users WHERE user_id = $1`, user).
		Scan(&d.requests, &d.calls, &d.tokens, &d.cost, &d.tickets)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCompletionsToolLoop: the client's own tool is passed through as a
// streamed call and never run by voxgate; the client answers it and the
// next, non-streamed request gets the answer. Each response names the
// model that answered and its usage, and the ledger holds exactly that.
func TestCompletionsToolLoop(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	ctx := context.Background()
	cl := c.client("u-tools", "")
	params := openai.ChatCompletionNewParams{Model: "chat", Tools: []openai.ChatCompletionToolUnionParam{weatherTool},
		Messages:      []openai.ChatCompletionMessageParamUnion{userMsg("What's the weather in Paris?")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	stream := cl.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	var models []string
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		models = append(models, ch.Model)
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("choices: %+v", acc.Choices)
	}
	first := acc.Choices[0]
	if first.FinishReason != "tool_calls" || len(first.Message.ToolCalls) != 1 {
		t.Fatalf("got finish %q and calls %+v, want one tool call", first.FinishReason, first.Message.ToolCalls)
	}
	call := first.Message.ToolCalls[0]
	if call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Paris"}` || call.ID == "" {
		t.Errorf("tool call: %+v", call)
	}
	for _, m := range models {
		if m != primaryModel {
			t.Fatalf("chunk models %v, want all %q", models, primaryModel)
		}
	}
	if acc.Usage.PromptTokens == 0 || acc.Usage.CompletionTokens == 0 ||
		acc.Usage.TotalTokens != acc.Usage.PromptTokens+acc.Usage.CompletionTokens {
		t.Errorf("include_usage: got %+v", acc.Usage)
	}
	if n := c.runs.Load(); n != 0 {
		t.Errorf("voxgate ran %d tools of its own", n)
	}

	// The client runs its tool and sends the result back.
	params.Messages = append(params.Messages, first.Message.ToParam(), openai.ToolMessage(`{"sky":"clear"}`, call.ID))
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	done, err := cl.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := done.Choices[0].Message.Content; got != weatherAnswer || done.Choices[0].FinishReason != "stop" {
		t.Errorf("answer: %q (%s)", got, done.Choices[0].FinishReason)
	}
	if done.Model != primaryModel || done.Object != "chat.completion" || !strings.HasPrefix(done.ID, "chatcmpl-") {
		t.Errorf("completion: model %q object %q id %q", done.Model, done.Object, done.ID)
	}

	recs := c.records(t, "u-tools")
	if len(recs) != 2 {
		t.Fatalf("records: %+v", recs)
	}
	for i, u := range []openai.CompletionUsage{acc.Usage, done.Usage} {
		r := recs[i]
		want := billing.Usage{TextIn: u.PromptTokens, TextCachedIn: u.PromptTokensDetails.CachedTokens, TextOut: u.CompletionTokens}
		if r.Kind != billing.KindCompletion || r.Provider != "primary" || !strings.HasPrefix(r.Model, primaryModel) ||
			r.UsageSource != billing.SourceProviderReported || r.Usage != want {
			t.Errorf("record %d: %+v, want usage %+v", i, r, want)
		}
		if r.CostMicros == nil || *r.CostMicros != c.cost(t, r.Model, want) {
			t.Errorf("record %d: cost %v, want %d", i, r.CostMicros, c.cost(t, r.Model, want))
		}
	}
	if recs[1].SessionID != done.ID || recs[1].TurnID != done.ID {
		t.Errorf("record ids %q/%q, want the completion's %q", recs[1].SessionID, recs[1].TurnID, done.ID)
	}
	d := c.day(t, "u-tools")
	wantTokens := recs[0].Usage.TextIn + recs[0].Usage.TextOut + recs[1].Usage.TextIn + recs[1].Usage.TextOut
	if d.requests != 2 || d.calls != 2 || d.tokens != wantTokens || d.cost != *recs[0].CostMicros+*recs[1].CostMicros || d.tickets != 0 {
		t.Errorf("settled day %+v, want 2 requests, %d tokens and no ticket", d, wantTokens)
	}
	if others := c.records(t, "u-other"); len(others) != 0 {
		t.Errorf("another user has records: %+v", others)
	}
}

// TestModelsByPlan: GET /v1/models lists the routes the plan names, in
// OpenAI's list shape; a route outside the plan, or none at all, is 404
// and counts nothing.
func TestModelsByPlan(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		plan string
		want []string
	}{{"", []string{"chat", "continued", "locked", "solo"}}, {"pro", []string{"chat", "continued", "locked", "premium", "solo"}}} {
		cl := c.client("u-models", tc.plan)
		page, err := cl.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range page.Data {
			got = append(got, m.ID)
			if m.Object != "model" || m.OwnedBy != "voxgate" || m.Created == 0 {
				t.Errorf("model %+v", m)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("plan %q: got %v, want %v", tc.plan, got, tc.want)
		}
	}
	for _, model := range []string{"premium", "gpt-4o", "default"} {
		_, err := c.client("u-models", "").Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: model,
			Messages: []openai.ChatCompletionMessageParamUnion{userMsg("hi")}})
		var ae *openai.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound || ae.Code != "NOT_FOUND" || ae.Param != "model" {
			t.Errorf("model %q: got %v, want 404 NOT_FOUND on param model", model, err)
		}
	}
	if d := c.day(t, "u-models"); d.requests != 0 {
		t.Errorf("refused requests counted: %+v", d)
	}
	if _, err := c.client("u-models", "pro").Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "premium",
		Messages: []openai.ChatCompletionMessageParamUnion{userMsg("hi")}}); err != nil {
		t.Errorf("pro on premium: %v", err)
	}
}

// TestCompletionsQuota: admission refuses what the plan's day cannot
// take, before any provider call, and the refusal counts nothing.
func TestCompletionsQuota(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	ctx := context.Background()
	// The free plan's 10,000 tokens a day cannot take a 48 KB conversation.
	big := strings.Repeat("oats ", 48_000/5)
	_, err := c.client("u-quota", "").Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "chat",
		Messages: []openai.ChatCompletionMessageParamUnion{userMsg(big)}})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusTooManyRequests || ae.Code != "QUOTA_EXCEEDED" {
		t.Fatalf("got %v, want 429 QUOTA_EXCEEDED", err)
	}
	if ae.Response.Header.Get("Retry-After") == "" {
		t.Error("a 429 without Retry-After")
	}
	if n := len(c.primary.hits()); n != 0 {
		t.Errorf("the provider saw %d requests", n)
	}
	if d := c.day(t, "u-quota"); d.requests != 0 || d.tickets != 0 {
		t.Errorf("a refusal counted: %+v", d)
	}
	// A body past the endpoint's bound is 413, whatever the plan.
	huge := strings.Repeat("x", 1<<20)
	_, err = c.client("u-quota", "pro").Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "chat",
		Messages: []openai.ChatCompletionMessageParamUnion{userMsg(huge)}})
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("got %v, want 413", err)
	}

	// The pro plan here allows one answer at a time: a second while the
	// first streams is refused, as a second chat turn would be.
	c.primary.fault(t, sim.Fault{Kind: sim.FaultSlowDrip, Fraction: 1, IntervalMS: 500})
	held, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(held, http.MethodPost, c.gateway+"/v1/chat/completions",
		strings.NewReader(`{"model":"solo","stream":true,"messages":[{"role":"user","content":"Tell me a story"}]}`))
	req.Header.Set("X-Test-User", "u-conc")
	req.Header.Set("X-Test-Plan", "pro")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q: %v", line, err)
	}
	_, err = c.client("u-conc", "pro").Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "solo", Messages: ask("hi")})
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusTooManyRequests || ae.Code != "CONCURRENT_LIMIT" {
		t.Errorf("a second answer at once: got %v, want 429 CONCURRENT_LIMIT", err)
	}
	if n := len(c.primary.hits()); n != 1 {
		t.Errorf("the provider saw %d requests, want the first alone", n)
	}
}

// TestCompletionsInStreamError: a stream cut after its first content ends
// with OpenAI's in-stream error object and no [DONE]: openai-go raises it
// rather than returning a cut answer, and nothing is continued on the
// fallback. What the cut answer used is still recorded, as an estimate.
func TestCompletionsInStreamError(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	c.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 3})
	stream := c.client("u-cut", "").Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "chat", Messages: []openai.ChatCompletionMessageParamUnion{userMsg("Tell me a story")}})
	var text string
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 {
			text += ch.Choices[0].Delta.Content
		}
	}
	var se *ssestream.StreamError
	if err := stream.Err(); !errors.As(err, &se) || !strings.Contains(se.Message, "AI_UNAVAILABLE") {
		t.Fatalf("got %v, want the in-stream AI_UNAVAILABLE error", stream.Err())
	}
	if text == "" || !strings.HasPrefix("Hi. Once upon a time ", text[:min(len(text), 21)]) {
		t.Errorf("text before the cut: %q", text)
	}
	if n := len(c.fallback.hits()); n != 0 {
		t.Errorf("the fallback saw %d requests after commit", n)
	}

	// The raw stream: the error object last, and no [DONE].
	body := c.raw(t, "u-cut", `{"model":"solo","stream":true,"messages":[{"role":"user","content":"Tell me a story"}]}`)
	lines := dataLines(body)
	if len(lines) < 2 || slices.Contains(lines, "[DONE]") || !strings.HasPrefix(lines[len(lines)-1], `{"error":`) {
		t.Errorf("raw stream's data lines: %q", lines)
	}
	recs := c.records(t, "u-cut")
	if len(recs) != 2 {
		t.Fatalf("records: %+v", recs)
	}
	for _, r := range recs {
		if r.Kind != billing.KindCompletion || r.Provider != "primary" || r.UsageSource != billing.SourceServerObserved ||
			r.Usage.TextIn == 0 || r.Usage.TextOut == 0 {
			t.Errorf("record of a cut answer: %+v", r)
		}
	}
	if d := c.day(t, "u-cut"); d.tickets != 0 || d.requests != 2 {
		t.Errorf("day %+v, want 2 requests settled", d)
	}
}

// raw posts body as user and returns the response body.
func (c *complFixture) raw(t testing.TB, user, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.gateway+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-User", user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func dataLines(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestCompletionsNoUserData: what the client says about its user (user,
// metadata, its own safety_identifier) never reaches a provider, nor does
// the caller's id; the provider gets the salted safety identifier alone.
func TestCompletionsNoUserData(t *testing.T) {
	t.Parallel()
	ids := safety.NewIdentifiers([]byte("completions-test-salt"))
	c := newComplFixture(t, func(o *options) { o.safetyIDs = ids })
	raw := c.raw(t, "user-4711", `{"model":"chat","messages":[{"role":"user","content":"hello"}],
		"user":"alice@example.com","metadata":{"name":"Alice Secretname"},"safety_identifier":"alice-hash"}`)
	if !strings.Contains(raw, `"chat.completion"`) {
		t.Fatalf("response: %s", raw)
	}
	bodies := c.primary.requests()
	if len(bodies) != 1 {
		t.Fatalf("requests: %d", len(bodies))
	}
	for _, leak := range []string{"alice", "Alice", "Secretname", "user-4711", `"user":`, `"metadata"`} {
		if strings.Contains(bodies[0], leak) {
			t.Errorf("the provider got %q: %s", leak, bodies[0])
		}
	}
	if want := ids.For("user-4711"); want == "" || !strings.Contains(bodies[0], `"safety_identifier":"`+want+`"`) {
		t.Errorf("the provider's safety identifier: want %q in %s", want, bodies[0])
	}
}

// TestCompletionsWholeToolCall: stream: false with a tool call answers
// OpenAI's message shape: the text said before it, the call whole,
// finish tool_calls.
func TestCompletionsWholeToolCall(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	raw := c.raw(t, "u-whole", `{"model":"chat","messages":[{"role":"user","content":"weather?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`)
	var got struct {
		Choices []struct {
			FinishReason string          `json:"finish_reason"`
			Message      json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got.Choices) != 1 {
		t.Fatalf("response %s: %v", raw, err)
	}
	var msg map[string]any
	_ = json.Unmarshal(got.Choices[0].Message, &msg)
	calls, _ := msg["tool_calls"].([]any)
	if got.Choices[0].FinishReason != "tool_calls" || msg["role"] != "assistant" || len(calls) != 1 {
		t.Fatalf("message %s (%s)", got.Choices[0].Message, got.Choices[0].FinishReason)
	}
	call := calls[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if call["type"] != "function" || call["id"] == "" || fn["name"] != "get_weather" || fn["arguments"] != `{"city":"Paris"}` {
		t.Errorf("call %v", call)
	}
	if msg["content"] != "Checking. " {
		t.Errorf("content %v", msg["content"])
	}
}
