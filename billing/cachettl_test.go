package billing_test

import (
	"context"
	"encoding/csv"
	"errors"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/billing"
)

// A cache write made under a 12-hour TTL is stored in its own column and
// priced at the 12-hour rate, never the 30-minute one; a model whose page
// prints no 12-hour figure is priced at twice its 30-minute write. Figures
// by hand from the model pages (models.md).
func TestCacheWrites12hPricedAtTheirOwnRate(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, model string
		usage       billing.Usage
		want        int64
	}{
		// 5,000 plain × $2.00 + 2,000 cached × $0.10 + 3,000 written for
		// 12 h × $5.00 + 500 out × $10.00 = 10,000 + 200 + 15,000 + 5,000.
		{"sol, all writes 12 h", "gpt-6.2-sol", billing.Usage{TextIn: 10_000, TextCachedIn: 2_000, TextCacheWriteIn: 3_000, TextCacheWrite12hIn: 3_000, TextOut: 500}, 30_200},
		// The same at 30 minutes: 3,000 × $2.50 = 7,500 for the writes.
		{"sol, all writes 30 min", "gpt-6.2-sol", billing.Usage{TextIn: 10_000, TextCachedIn: 2_000, TextCacheWriteIn: 3_000, TextOut: 500}, 22_700},
		// terra: 1,000 × $1.00 + 1,000 written 30 min × $1.25 + 2,000
		// written 12 h × $2.50 (3P) = 1,000 + 1,250 + 5,000.
		{"terra, a split", "gpt-6.1-terra", billing.Usage{TextIn: 4_000, TextCacheWriteIn: 3_000, TextCacheWrite12hIn: 2_000}, 7_250},
		// luna's page prints no 12 h figure: 4,000 × 2 × $0.125 = 1,000.
		{"luna at twice its 30-minute write", "gpt-6-luna", billing.Usage{TextIn: 4_000, TextCacheWriteIn: 4_000, TextCacheWrite12hIn: 4_000}, 1_000},
	} {
		rec := billing.Record{UserID: "alice", SessionID: "cs_" + c.name, TurnID: "t_1", Kind: billing.KindCompletion,
			Provider: "openai", Model: c.model, Usage: c.usage, UsageSource: billing.SourceProviderReported}
		got, err := fx.ledger.Write(ctx, fx.pool, rec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.CostMicros == nil || *got.CostMicros != c.want {
			t.Errorf("%s: cost %v, want %d micros", c.name, got.CostMicros, c.want)
		}
		stored, err := fx.ledger.Detail(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Usage != c.usage || stored.Tokens.TextCacheWrite12hIn != c.usage.TextCacheWrite12hIn || *stored.LinesTotal != c.want {
			t.Errorf("%s: read back %+v (lines total %v), want %+v", c.name, stored.Usage, *stored.LinesTotal, c.usage)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(get(t, fx.ledger.HandleCSV, "/v1/admin/costs.csv").Body.String())).ReadAll()
	if err != nil || len(rows) != 5 {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		seen[row[col["text_cache_write_12h_in"]]+"/"+row[col["cost_micros"]]] = true
	}
	for _, want := range []string{"3000/30200", "0/22700", "2000/7250", "4000/1000"} {
		if !seen[want] {
			t.Errorf("CSV has no row with text_cache_write_12h_in/cost_micros %s: %v", want, rows)
		}
	}
	// The database refuses what the type refuses: 12-hour writes above
	// the writes.
	if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET text_cache_write_12h_in = text_cache_write_in + 1 WHERE model = 'gpt-6.2-sol'`); err == nil {
		t.Fatal("the database accepted 12-hour writes above the writes")
	}
	bad := billing.Usage{TextIn: 10, TextCacheWriteIn: 2, TextCacheWrite12hIn: 3}
	if err := bad.Check(); !errors.Is(err, billing.ErrCount) {
		t.Errorf("12-hour writes above the writes: %v, want ErrCount", err)
	}
}

// The service tier the response named multiplies every class of the
// record: priority ×2, flex and batch ×0.5; a tier with no known multiple
// leaves the record unpriced, never priced as the standard tier.
func TestServiceTierMultipliesTheRecord(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	// Standard: 5,000 × $2.00 + 2,000 × $0.10 + 3,000 × $5.00 (12 h) +
	// 500 × $10.00 = 30,200 micros.
	usage := billing.Usage{TextIn: 10_000, TextCachedIn: 2_000, TextCacheWriteIn: 3_000, TextCacheWrite12hIn: 3_000, TextOut: 500}
	for _, c := range []struct {
		tier string
		want int64 // -1: unpriced
	}{
		{"", 30_200}, {"default", 30_200}, {"priority", 60_400}, {"flex", 15_100}, {"batch", 15_100}, {"scale", -1},
	} {
		u := usage
		u.ServiceTier = c.tier
		rec := billing.Record{UserID: "bob", SessionID: "cs_tier_" + c.tier, TurnID: "t_1", Kind: billing.KindCompletion,
			Provider: "openai", Model: "gpt-6.2-sol", Usage: u, UsageSource: billing.SourceProviderReported}
		got, err := fx.ledger.Write(ctx, fx.pool, rec)
		if err != nil {
			t.Fatalf("tier %q: %v", c.tier, err)
		}
		switch {
		case c.want < 0 && got.CostMicros != nil:
			t.Errorf("tier %q: cost %d, want unpriced", c.tier, *got.CostMicros)
		case c.want >= 0 && (got.CostMicros == nil || *got.CostMicros != c.want):
			t.Errorf("tier %q: cost %v, want %d", c.tier, got.CostMicros, c.want)
		}
		d, err := fx.ledger.Detail(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.ServiceTier != c.tier {
			t.Errorf("tier %q: read back %q", c.tier, d.ServiceTier)
		}
		if c.want < 0 && !strings.Contains(d.UnpricedReason, "service tier scale") {
			t.Errorf("tier %q: unpriced reason %q", c.tier, d.UnpricedReason)
		}
	}
	// A half micro-dollar: 5 tokens of luna input at $0.10 per 1M is 0.5
	// micros, 1 at the standard tier (half up), 0.25 on flex (0) and 1.0
	// on priority.
	p, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	for tier, want := range map[string]int64{"": 1, "flex": 0, "priority": 1} {
		if got, err := p.Cost(billing.Line{Model: "gpt-6-luna", Usage: billing.Usage{TextIn: 5, ServiceTier: tier}}); err != nil || got != want {
			t.Errorf("5 luna tokens on %q: %d, %v; want %d", tier, got, err, want)
		}
	}
	// Calls summed over two tiers have no one multiple: unpriced, never
	// priced as either.
	flex, prio := billing.Usage{TextIn: 10, ServiceTier: "flex"}, billing.Usage{TextIn: 10, ServiceTier: "priority"}
	if got := flex.Add(flex).ServiceTier; got != "flex" {
		t.Errorf("flex + flex: tier %q", got)
	}
	var unpriced *billing.Unpriced
	if _, err := p.Cost(billing.Line{Model: "gpt-6-luna", Usage: flex.Add(prio)}); !errors.As(err, &unpriced) {
		t.Errorf("flex + priority priced: %v", err)
	}
	if err := (billing.Usage{TextIn: 1, ServiceTier: "Priority; DROP"}).Check(); !errors.Is(err, billing.ErrCount) {
		t.Errorf("a tier that is no tier's name: %v, want ErrCount", err)
	}
	if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET service_tier = 'Flex!' WHERE user_id = 'bob'`); err == nil {
		t.Fatal("the database accepted a tier that is no tier's name")
	}
}
