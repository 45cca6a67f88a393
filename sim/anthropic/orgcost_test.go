package anthropic_test

import (
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/sim"
)

// The simulator bills Sonnet 5.5's cache reads at the price of the day
// (models.md: $0.20 on the model page, $0.10 from 2026-10-07 in third-party
// tables), and its cost report, read by anthropic-sdk-go v2's own types,
// gives each day's amount in cents. Worked out here by hand from the usage
// each Message reported, at the reference table's prices in dollars per 1M:
// input 2.00, 5-minute write 2.50, output 10.00, read 0.20 or 0.10.
func TestAnthropicOrgCostDatesSonnetCacheReads(t *testing.T) {
	var now atomic.Int64
	day1 := time.Date(2026, 10, 6, 12, 0, 0, 0, time.UTC)
	day2 := time.Date(2026, 10, 8, 12, 0, 0, 0, time.UTC)
	now.Store(day1.UnixNano())
	_, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: "ok"}, Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
	long := strings.Repeat("abcd", 1100)
	p := anthropic.MessageNewParams{Model: "claude-sonnet-5-5", MaxTokens: 10, CacheControl: anthropic.NewCacheControlEphemeralParam(),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(long))}}
	// want is each day's cents, exact: n tokens at p micro-dollars per 1M
	// are n·p / (10,000 × 1,000,000) cents.
	want := map[string]*big.Rat{}
	tokens := map[string]int64{}
	for _, at := range []time.Time{day1, day2} {
		now.Store(at.UnixNano())
		read := int64(200_000) // micro-dollars per 1M
		if !at.Before(time.Date(2026, 10, 7, 0, 0, 0, 0, time.UTC)) {
			read = 100_000
		}
		sum := new(big.Rat)
		for range 2 { // the first writes the cache, the second reads it
			m, err := c.Messages.New(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			u := m.Usage
			micro := u.InputTokens*2_000_000 + u.CacheCreationInputTokens*2_500_000 + u.CacheReadInputTokens*read + u.OutputTokens*10_000_000
			sum.Add(sum, big.NewRat(micro, 10_000*1_000_000)) // micro-dollars per 1M tokens → cents
			tokens[at.Format(time.DateOnly)] += u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
		}
		want[at.Format(time.DateOnly)] = sum
	}
	if want["2026-10-06"].Cmp(want["2026-10-08"]) <= 0 {
		t.Fatalf("no cache read happened: %v", want)
	}
	now.Store(day2.Add(24 * time.Hour).UnixNano())
	page, err := c.Beta.Organization.Analytics.Cost.List(t.Context(), anthropic.BetaOrganizationAnalyticsCostListParams{
		StartingAt: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), EndingAt: anthropic.Time(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)),
		GroupBy: []anthropic.BetaAnalyticsCostGroupBy{anthropic.BetaAnalyticsCostGroupByModel}, TimeBucketWidth: anthropic.BetaAnalyticsTimeBucketWidthDay})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 {
		t.Fatalf("rows %+v; want one a day", page.Data)
	}
	for _, row := range page.Data {
		got, ok := new(big.Rat).SetString(row.Cost.Amount)
		w := want[row.StartingAt.UTC().Format(time.DateOnly)]
		if !ok || w == nil || got.Cmp(w) != 0 || row.Group.Model != "claude-sonnet-5-5" || row.Cost.Requests != 2 || row.Cost.Currency != "USD" {
			t.Errorf("row %s %s: %s cents over %d requests; want %s", row.StartingAt.Format(time.DateOnly), row.Group.Model,
				row.Cost.Amount, row.Cost.Requests, w.FloatString(8))
		}
	}
	// The usage report has the same Messages' tokens, by class.
	usage, err := c.Beta.Organization.Analytics.Usage.List(t.Context(), anthropic.BetaOrganizationAnalyticsUsageListParams{
		StartingAt: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), EndingAt: anthropic.Time(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)),
		GroupBy: []anthropic.BetaAnalyticsUsageGroupBy{anthropic.BetaAnalyticsUsageGroupByModel}, TimeBucketWidth: anthropic.BetaAnalyticsTimeBucketWidthDay})
	if err != nil || len(usage.Data) != 2 {
		t.Fatalf("usage %+v, %v", usage, err)
	}
	for _, row := range usage.Data {
		u := row.Usage
		sum := u.UncachedInputTokens + u.CacheCreation.Ephemeral5mInputTokens + u.CacheCreation.Ephemeral1hInputTokens + u.CacheReadInputTokens + u.OutputTokens
		if day := row.StartingAt.UTC().Format(time.DateOnly); sum != tokens[day] || u.TotalTokens != sum || u.CacheReadInputTokens == 0 || u.Requests != 2 {
			t.Errorf("usage %s: %+v; want %d tokens over 2 requests, some read", day, u, tokens[day])
		}
	}
	// Another grouping is refused by name, not answered as if by model.
	_, err = c.Beta.Organization.Analytics.Cost.List(t.Context(), anthropic.BetaOrganizationAnalyticsCostListParams{
		StartingAt: day1, GroupBy: []anthropic.BetaAnalyticsCostGroupBy{anthropic.BetaAnalyticsCostGroupByWorkspaceID}})
	if err == nil || !strings.Contains(err.Error(), "workspace_id") {
		t.Fatalf("group_by workspace_id: %v", err)
	}
}
