package billing_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/billing"
)

// TestRouterKinds: a /v1/chat/completions request and a failed attempt its
// provider billed are records of their own kinds, priced like any other,
// and finance can list each kind apart; an unknown kind is refused.
func TestRouterKinds(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	text := billing.Usage{TextIn: 1_000, TextCachedIn: 400, TextOut: 200}
	for _, r := range []billing.Record{
		{UserID: "carol", SessionID: "cc_1", TurnID: "t1", Kind: billing.KindCompletion, Provider: "claude",
			Model: "claude-haiku-5-5", Usage: text, UsageSource: billing.SourceProviderReported},
		{UserID: "carol", SessionID: "cc_1", TurnID: "t1/1", Kind: billing.KindAttempt, Provider: "openai",
			Model: "gpt-6-luna", Usage: text, UsageSource: billing.SourceProviderReported},
	} {
		got, err := fx.ledger.Write(ctx, fx.pool, r)
		if err != nil {
			t.Fatalf("%s: %v", r.Kind, err)
		}
		// Both models: 600 uncached in × 0.1 + 400 cached × 0.01 + 200 out
		// × 0.5 micro-USD a token = 60 + 4 + 100.
		if got.CostMicros == nil || *got.CostMicros != 164 {
			t.Fatalf("%s record: got cost %v, want 164 micro-USD", r.Kind, show(got.CostMicros))
		}
	}
	if _, err := fx.ledger.Write(ctx, fx.pool, billing.Record{UserID: "carol", SessionID: "x", Kind: "retry",
		Provider: "openai", Model: "gpt-6-luna", UsageSource: billing.SourceNone}); err == nil {
		t.Fatal("a record of an unknown kind was written")
	}
	for _, kind := range []string{billing.KindCompletion, billing.KindAttempt} {
		rec := get(t, fx.ledger.HandleSessions, "/v1/admin/sessions?user_id=carol&kind="+kind)
		var body struct {
			Items []billing.Record `json:"items"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
			t.Fatalf("kind %s: status %d, %v: %s", kind, rec.Code, err, rec.Body)
		}
		if len(body.Items) != 1 || body.Items[0].Kind != kind {
			t.Fatalf("kind %s: got %+v", kind, body.Items)
		}
	}
}
