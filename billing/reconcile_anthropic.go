package billing

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// AnthropicUsage reads Anthropic's Usage and Cost Analytics API (usage by
// token class, cost in fractional cents) with an Admin API key, through
// the official client.
type AnthropicUsage struct {
	client anthropic.Client
}

// NewAnthropicUsage is the usage of the organization at baseURL ("" is
// Anthropic's) read with adminKey.
func NewAnthropicUsage(baseURL, adminKey string) *AnthropicUsage {
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithAPIKey(adminKey), option.WithMaxRetries(2)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimRight(baseURL, "/")+"/"))
	}
	return &AnthropicUsage{client: anthropic.NewClient(opts...)}
}

// Figures reads each UTC day's tokens and cost by model, page by page.
// Tokens are every class the usage names (uncached input, both cache
// writes, cache reads, output): what the ledger counts as a record's input
// (cache classes included, as the gateway's adapter reports them) and
// output. A cost is fractional cents, exact, turned into micro-USD
// rounded half up once per day and model.
func (a *AnthropicUsage) Figures(ctx context.Context, from, to time.Time) ([]ProviderFigures, error) {
	var out []ProviderFigures
	usage := anthropic.BetaOrganizationAnalyticsUsageListParams{StartingAt: from, EndingAt: anthropic.Time(to),
		GroupBy:         []anthropic.BetaAnalyticsUsageGroupBy{anthropic.BetaAnalyticsUsageGroupByModel},
		TimeBucketWidth: anthropic.BetaAnalyticsTimeBucketWidthDay}
	pages := a.client.Beta.Organization.Analytics.Usage.ListAutoPaging(ctx, usage)
	for pages.Next() {
		r := pages.Current()
		u := r.Usage
		out = append(out, ProviderFigures{Date: r.StartingAt.UTC().Format(time.DateOnly), Model: r.Group.Model,
			Tokens: u.UncachedInputTokens + u.CacheCreation.Ephemeral5mInputTokens + u.CacheCreation.Ephemeral1hInputTokens +
				u.CacheReadInputTokens + u.OutputTokens})
	}
	if err := pages.Err(); err != nil {
		return nil, err
	}
	cost := anthropic.BetaOrganizationAnalyticsCostListParams{StartingAt: from, EndingAt: anthropic.Time(to),
		GroupBy:         []anthropic.BetaAnalyticsCostGroupBy{anthropic.BetaAnalyticsCostGroupByModel},
		TimeBucketWidth: anthropic.BetaAnalyticsTimeBucketWidthDay}
	costs := a.client.Beta.Organization.Analytics.Cost.ListAutoPaging(ctx, cost)
	for costs.Next() {
		r := costs.Current()
		micros, err := centsToMicros(r.Cost.Amount)
		if err != nil {
			return nil, err
		}
		out = append(out, ProviderFigures{Date: r.StartingAt.UTC().Format(time.DateOnly), Model: r.Group.Model, CostMicros: micros})
	}
	if err := costs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// centsToMicros is a decimal amount of cents in micro-USD (10,000 a cent),
// rounded half up.
func centsToMicros(amount string) (int64, error) {
	c, ok := new(big.Rat).SetString(amount)
	if !ok || c.Sign() < 0 {
		return 0, fmt.Errorf("billing: anthropic cost %q is not an amount in cents", amount)
	}
	c.Mul(c, big.NewRat(10_000, 1))
	n := new(big.Int).Mul(c.Num(), big.NewInt(2))
	n.Add(n, c.Denom())
	n.Quo(n, new(big.Int).Mul(c.Denom(), big.NewInt(2))) // ⌊x + ½⌋
	if !n.IsInt64() {
		return 0, fmt.Errorf("billing: anthropic cost %q is out of range", amount)
	}
	return n.Int64(), nil
}
