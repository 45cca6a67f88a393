package responses_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresp "github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/sim/simtest"
)

var weatherTool = oresp.ToolParamOfFunction("get_weather", map[string]any{"type": "object",
	"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}, false)

func text(s string) oresp.ResponseNewParamsInputUnion {
	return oresp.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

// call is a function_call output item as the API sends it.
type call struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// calls are resp's function calls.
func calls(t *testing.T, resp *oresp.Response) []call {
	t.Helper()
	var out []call
	for _, it := range resp.Output {
		var c call
		if err := json.Unmarshal([]byte(it.RawJSON()), &c); err != nil {
			t.Fatal(err)
		}
		if c.Type == "function_call" {
			out = append(out, c)
		}
	}
	return out
}

// TestWholeAnswerStoredAndRecorded: a string input is answered whole,
// in the spec's Response, naming the model that answered and its usage;
// the ledger has one record of kind response priced at that usage; the
// response is stored for its owner alone: another user's GET and DELETE
// are 404 and leave it, the owner's DELETE removes it.
func TestWholeAnswerStoredAndRecorded(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	f := newFixture(t, options{})
	ctx := context.Background()
	resp, err := f.client("u-whole").Responses.New(ctx, oresp.ResponseNewParams{Model: "chat", Input: text("Hi")})
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate("Response", []byte(resp.RawJSON())); err != nil {
		t.Errorf("Response: %v\n%s", err, resp.RawJSON())
	}
	if resp.Status != "completed" || resp.OutputText() != helloAnswer || resp.Model != model || !strings.HasPrefix(resp.ID, "resp_") {
		t.Errorf("got status %q, text %q, model %q, id %q", resp.Status, resp.OutputText(), resp.Model, resp.ID)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 || resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens {
		t.Errorf("usage: %+v", resp.Usage)
	}
	recs := f.records(t, "u-whole")
	if len(recs) != 1 || recs[0].Kind != billing.KindResponse || recs[0].SessionID != resp.ID {
		t.Fatalf("records: %+v", recs)
	}
	want, err := f.prices.Cost(billing.Line{Model: recs[0].Model, Usage: billing.Usage{TextIn: resp.Usage.InputTokens,
		TextCachedIn: resp.Usage.InputTokensDetails.CachedTokens, TextOut: resp.Usage.OutputTokens}})
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Usage.TextIn != resp.Usage.InputTokens || recs[0].Usage.TextOut != resp.Usage.OutputTokens || *recs[0].CostMicros != want || want <= 0 {
		t.Errorf("record %+v (cost %d), want the response's usage at cost %d", recs[0], *recs[0].CostMicros, want)
	}
	if row := testgraph.OneAuditRow(t, f.g.Pool, "u-whole"); row.ID != resp.ID || row.Status != audit.Success {
		t.Errorf("audit row: %+v", row)
	}

	other := f.client("u-other")
	var ae *openai.Error
	if _, err := other.Responses.Get(ctx, resp.ID, oresp.ResponseGetParams{}); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Errorf("another user's GET: %v, want 404", err)
	}
	if err := other.Responses.Delete(ctx, resp.ID); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Errorf("another user's DELETE: %v, want 404", err)
	}
	got, err := f.client("u-whole").Responses.Get(ctx, resp.ID, oresp.ResponseGetParams{})
	if err != nil {
		t.Fatalf("the owner's GET after another's DELETE: %v", err)
	}
	if got.ID != resp.ID || got.OutputText() != helloAnswer {
		t.Errorf("retrieved %q %q", got.ID, got.OutputText())
	}
	if err := spec.Validate("Response", []byte(got.RawJSON())); err != nil {
		t.Errorf("retrieved Response: %v", err)
	}
	if err := f.client("u-whole").Responses.Delete(ctx, resp.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if n := f.count(t, `SELECT count(*) FROM stored_responses WHERE id = $1`, resp.ID); n != 0 {
		t.Errorf("%d rows after delete", n)
	}
	if _, err := f.client("u-whole").Responses.Get(ctx, resp.ID, oresp.ResponseGetParams{}); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Errorf("GET after delete: %v, want 404", err)
	}
}

// TestToolLoopItems: the client's function tool comes back as a
// function_call item and is never run by voxgate; items with the call
// and its output are answered. store: false keeps nothing.
func TestToolLoopItems(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	cl := f.client("u-tools")
	first, err := cl.Responses.New(ctx, oresp.ResponseNewParams{Model: "chat", Input: text("What's the weather in Paris?"),
		Tools: []oresp.ToolUnionParam{weatherTool}, Store: openai.Bool(false)})
	if err != nil {
		t.Fatal(err)
	}
	cs := calls(t, first)
	if len(cs) != 1 || cs[0].Name != "get_weather" || cs[0].Arguments != `{"city":"Paris"}` || cs[0].CallID == "" {
		t.Fatalf("calls: %+v in %s", cs, first.RawJSON())
	}
	input := oresp.ResponseInputParam{
		oresp.ResponseInputItemParamOfMessage("What's the weather in Paris?", oresp.EasyInputMessageRoleUser),
		oresp.ResponseInputItemParamOfFunctionCall(cs[0].Arguments, cs[0].CallID, cs[0].Name),
		oresp.ResponseInputItemParamOfFunctionCallOutput(`{"sky":"sunny"}`),
	}
	input[2].OfFunctionCallOutput.CallID = openai.String(cs[0].CallID)
	second, err := cl.Responses.New(ctx, oresp.ResponseNewParams{Model: "chat", Tools: []oresp.ToolUnionParam{weatherTool},
		Input: oresp.ResponseNewParamsInputUnion{OfInputItemList: input}, Store: openai.Bool(false)})
	if err != nil {
		var ae *openai.Error
		errors.As(err, &ae)
		t.Fatalf("%v: %s", err, ae.RawJSON())
	}
	if second.OutputText() != weatherAnswer || len(calls(t, second)) != 0 {
		t.Errorf("second answer: %s", second.RawJSON())
	}
	if n := f.count(t, `SELECT count(*) FROM stored_responses WHERE user_id = 'u-tools'`); n != 0 {
		t.Errorf("store: false kept %d responses", n)
	}
	if recs := f.records(t, "u-tools"); len(recs) != 2 || recs[0].Kind != billing.KindResponse || recs[1].Kind != billing.KindResponse {
		t.Errorf("records: %+v", recs)
	}
}

// TestContinuationAcrossReplicas: a response stored by one replica is
// continued by previous_response_id on another over the same database;
// another user's id is 404 naming previous_response_id, and nothing is
// admitted for it.
func TestContinuationAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := newFixture(t, options{})
	b := newFixture(t, options{share: a})
	ctx := context.Background()
	first, err := a.client("u-chain").Responses.New(ctx, oresp.ResponseNewParams{Model: "chat",
		Input: text("What's the weather in Paris?"), Tools: []oresp.ToolUnionParam{weatherTool},
		Instructions: openai.String("Be brief.")})
	if err != nil {
		t.Fatal(err)
	}
	cs := calls(t, first)
	if len(cs) != 1 {
		t.Fatalf("calls: %s", first.RawJSON())
	}
	out := oresp.ResponseInputItemParamOfFunctionCallOutput(`{"sky":"sunny"}`)
	out.OfFunctionCallOutput.CallID = openai.String(cs[0].CallID)
	next := oresp.ResponseNewParams{Model: "chat", PreviousResponseID: openai.String(first.ID),
		Tools: []oresp.ToolUnionParam{weatherTool}, Input: oresp.ResponseNewParamsInputUnion{OfInputItemList: oresp.ResponseInputParam{out}}}
	second, err := b.client("u-chain").Responses.New(ctx, next)
	if err != nil {
		t.Fatalf("continued on the other replica: %v", err)
	}
	if second.OutputText() != weatherAnswer || second.PreviousResponseID != first.ID {
		t.Errorf("continuation: %s", second.RawJSON())
	}
	if second.Instructions.OfString != "" {
		t.Errorf("instructions carried over: %s", second.RawJSON())
	}
	var ae *openai.Error
	_, err = b.client("u-thief").Responses.New(ctx, next)
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound || ae.Param != "previous_response_id" {
		t.Errorf("another user's previous_response_id: %v, want 404 naming it", err)
	}
	if recs := b.records(t, "u-thief"); len(recs) != 0 {
		t.Errorf("the refused continuation recorded %+v", recs)
	}
}

// TestQuotaRefusal: admission refuses what the plan's day cannot take,
// before any provider call; nothing is recorded.
func TestQuotaRefusal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	big := strings.Repeat("oats ", 48_000/5) // the free plan's 10,000 tokens a day cannot take it
	_, err := f.client("u-quota").Responses.New(context.Background(), oresp.ResponseNewParams{Model: "chat", Input: text(big)})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusTooManyRequests || ae.Code != "QUOTA_EXCEEDED" {
		t.Fatalf("got %v, want 429 QUOTA_EXCEEDED", err)
	}
	if recs := f.records(t, "u-quota"); len(recs) != 0 {
		t.Errorf("records: %+v", recs)
	}
}

// TestSafetyBlockedClaim: the output filter blocks a medical claim in a
// whole answer and a streamed one: the claim never reaches the client,
// the fallback does, and the audit rows say so.
func TestSafetyBlockedClaim(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	resp, err := f.client("u-claim").Responses.New(ctx, oresp.ResponseNewParams{Model: "chat", Input: text("What is a good breakfast?")})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.OutputText()
	if strings.Contains(got, "cures") || !strings.HasSuffix(got, safety.Fallback) || !strings.HasPrefix(got, "Oats are a great breakfast.") {
		t.Errorf("whole answer: %q", got)
	}
	st := f.client("u-claim-stream").Responses.NewStreaming(ctx, oresp.ResponseNewParams{Model: "chat", Input: text("What is a good breakfast?")})
	var streamed strings.Builder
	for st.Next() {
		if ev := st.Current(); ev.Type == "response.output_text.delta" {
			streamed.WriteString(ev.Delta)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if s := streamed.String(); strings.Contains(s, "cures") || !strings.HasSuffix(s, safety.Fallback) {
		t.Errorf("streamed answer: %q", s)
	}
	for _, u := range []string{"u-claim", "u-claim-stream"} {
		if row := testgraph.OneAuditRow(t, f.g.Pool, u); row.Status != audit.MedicalClaimBlocked {
			t.Errorf("%s: audit status %q", u, row.Status)
		}
	}
}
