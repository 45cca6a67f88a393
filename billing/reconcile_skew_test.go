package billing_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// lunaInput is gpt-6-luna's text input price in the embedded table: $0.10
// per 1M tokens, its model page's figure (models.md).
var lunaInput = regexp.MustCompile(`(?m)^(  gpt-6-luna:\n(?:    .*\n)*?    text_in: )100000\n`)

// skewedFixture is a ledger priced with the embedded table but for one
// rate, gpt-6-luna's input at $0.12 per 1M, loaded the way an operator's
// override is.
func skewedFixture(t *testing.T) fixture {
	t.Helper()
	data, err := os.ReadFile("prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !lunaInput.Match(data) {
		t.Fatal("prices.yaml no longer prices gpt-6-luna's input at 100000: update this test's skew")
	}
	prices, err := billing.LoadPrices(lunaInput.ReplaceAll(data, []byte("${1}120000\n")))
	if err != nil {
		t.Fatal(err)
	}
	pool := pgtest.NewPool(t, pgtest.URL(t), 4)
	reg := prometheus.NewRegistry()
	l, err := billing.NewLedger(billing.LedgerParams{Pool: pool, Prices: prices, Registerer: reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{pool, l, reg}
}

// The ledger against the simulator, each pricing with its own table: with
// the published rates every day is green; with one rate skewed in the
// ledger's table (gpt-6-luna's input, $0.12 for $0.10) every day turns
// red, in that model only, by exactly the skew. The expected difference
// is a hand computation at the two rates, not either side's code.
func TestReconcileTurnsRedOnASkewedPrice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	published, skewed := newFixture(t), skewedFixture(t)
	var now atomic.Int64
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	_, ts := simtest.NewServer(t, sim.Config{Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(simtest.TestKey), option.WithMaxRetries(0))

	const days = 3
	skew := map[string]int64{} // by day, micro-USD: ledger − provider for gpt-6-luna
	for d := range days {
		for i, model := range []string{"gpt-4.1-mini", "gpt-6-luna"} {
			at := nov.AddDate(0, 0, d).Add(time.Duration(5+i) * time.Hour)
			now.Store(at.UnixNano())
			// About 800 prompt tokens: a sizeable input cost, and below
			// the 1,024 tokens a prompt needs before any of it is cached.
			resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("leek and potato soup ", 150+10*d))}})
			if err != nil {
				t.Fatal(err)
			}
			for _, fx := range []fixture{published, skewed} {
				rec, err := fx.ledger.Write(ctx, fx.pool, billing.Record{UserID: "alice", SessionID: resp.ID, TurnID: "t",
					Kind: billing.KindCompletion, Provider: "openai", Model: resp.Model, Usage: completionUsage(t, resp),
					UsageSource: billing.SourceProviderReported})
				if err != nil || rec.CostMicros == nil {
					t.Fatalf("write: %v, %+v", err, rec)
				}
				if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET created_at = $1 WHERE id = $2`, at, rec.ID); err != nil {
					t.Fatal(err)
				}
			}
			if model == "gpt-6-luna" {
				// In hundredths of a micro-USD (n tokens at $d per 1M are
				// n·d micro-USD), each side rounded half up per request.
				p, c := resp.Usage.PromptTokens, resp.Usage.CompletionTokens
				if resp.Usage.PromptTokensDetails.CachedTokens != 0 {
					t.Fatalf("cached tokens %d: the hand computation assumes none", resp.Usage.PromptTokensDetails.CachedTokens)
				}
				ledger, provider := (p*12+c*50+50)/100, (p*10+c*50+50)/100
				skew[at.Format(time.DateOnly)] += ledger - provider
			}
		}
	}
	reconcile := func(fx fixture) billing.Reconciliation {
		t.Helper()
		h := fx.ledger.HandleReconcile(billing.NewOpenAIUsage(ts.URL+"/v1", simtest.TestKey))
		rec := get(t, h, "/v1/admin/costs/reconcile?from=2026-11-01&to=2026-11-04&threshold_micros=0")
		var out billing.Reconciliation
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if len(out.Days) != days {
			t.Fatalf("%d days, want %d", len(out.Days), days)
		}
		return out
	}
	if clean := reconcile(published); clean.RedDays != 0 {
		t.Fatalf("published rates: %d red days, want none: %+v", clean.RedDays, clean.Days)
	}
	red := reconcile(skewed)
	if red.RedDays != days {
		t.Errorf("skewed rate: %d red days, want all %d", red.RedDays, days)
	}
	for _, d := range red.Days {
		for _, m := range d.Models {
			want := int64(0)
			if m.Model == "gpt-6-luna" {
				want = skew[d.Date]
			}
			if m.Red != (want != 0) || m.CostDiffMicros != want || m.TokenDiff != 0 {
				t.Errorf("%s %s: %+v, want a cost difference of %d micro-USD and none in tokens", d.Date, m.Model, m, want)
			}
		}
	}
}
