package billing_test

import (
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// The embedded table doubles gemini-3.8-flash's prices on 2026-12-31:
// $0.75 in, $0.075 cached, $3.75 out per 1M until then, $1.50, $0.15 and
// $7.50 from that UTC day.
func TestGemini38FlashPricesDoubleOnTheDay(t *testing.T) {
	t.Parallel()
	p, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	u := billing.Usage{TextIn: 1_000_000, TextCachedIn: 200_000, TextOut: 100_000}
	cases := []struct {
		at   time.Time
		want int64
	}{
		// 800,000 × 0.75 + 200,000 × 0.075 + 100,000 × 3.75 micro-dollars
		{time.Date(2026, 12, 30, 23, 59, 59, 0, time.UTC), 600_000 + 15_000 + 375_000},
		// 800,000 × 1.50 + 200,000 × 0.15 + 100,000 × 7.50
		{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), 1_200_000 + 30_000 + 750_000},
	}
	for _, tc := range cases {
		got, err := p.At(tc.at).Cost(billing.Line{Model: "gemini-3.8-flash", Usage: u})
		if err != nil || got != tc.want {
			t.Errorf("at %s: %d, %v; want %d", tc.at, got, err, tc.want)
		}
	}
}
