package billing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// A table with one model whose cached input is $0.20 per 1M on its page
// and $0.10 from 2026-10-07 in another source.
const datedTable = `version: "dated"
models:
  m-dated:
    source: page
    date: "2026-09-01"
    text_in: 2000000
    text_cached_in: 200000
    text_out: 10000000
    dated:
      - from: "2026-12-01"
        source: a later page
        date: "2026-11-20"
        text_out: 12000000
      - from: "2026-10-07"
        source: two third-party tables
        date: "2026-10-07"
        text_cached_in: 100000
`

// The record's day decides the price: before the first entry the base,
// then each entry over the one before (out of order in the file), from
// the UTC midnight of its day.
func TestDatedPricesByTheRecordsTime(t *testing.T) {
	t.Parallel()
	p, err := billing.LoadPrices([]byte(datedTable))
	if err != nil {
		t.Fatal(err)
	}
	u := billing.Usage{TextIn: 1_000_000, TextCachedIn: 400_000, TextOut: 100_000}
	cases := []struct {
		at   string
		want int64
	}{
		// 600,000 × $2 + 400,000 × $0.20 + 100,000 × $10 per 1M
		{"2026-10-06T23:59:59Z", 1_200_000 + 80_000 + 1_000_000},
		// cached input at $0.10 from the 7th
		{"2026-10-07T00:00:00Z", 1_200_000 + 40_000 + 1_000_000},
		// and output at $12 from December, the cache read kept
		{"2026-12-01T00:00:00Z", 1_200_000 + 40_000 + 1_200_000},
	}
	for _, tc := range cases {
		at, _ := time.Parse(time.RFC3339, tc.at)
		got, err := p.At(at).Cost(billing.Line{Model: "m-dated", Usage: u})
		if err != nil || got != tc.want {
			t.Errorf("at %s: %d, %v; want %d", tc.at, got, err, tc.want)
		}
		m, _ := p.At(at).Lookup("m-dated-2026-09-01")
		if c, _ := m.Price(billing.TextCachedIn); c != map[bool]int64{true: 200_000, false: 100_000}[at.Before(time.Date(2026, 10, 7, 0, 0, 0, 0, time.UTC))] {
			t.Errorf("at %s: snapshot's cached price %d", tc.at, c)
		}
	}
	// Without a time the table prices now: after 2026-10-07, and before
	// December until December comes.
	want := int64(2_240_000)
	if !time.Now().Before(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		want = 2_440_000
	}
	if got, _ := p.Cost(billing.Line{Model: "m-dated", Usage: u}); got != want {
		t.Errorf("now: %d, want %d", got, want)
	}
	bad := map[string]string{
		"bad day":    `"2026-13-01"`,
		"same day":   `"2026-10-07"`,
		"no source":  `"2026-11-01"`,
		"nested":     `"2026-11-02"`,
		"no prices":  `"2026-11-03"`,
		"half price": `"2026-11-04"`,
	}
	extra := map[string]string{
		"bad day":    "        source: s\n        date: \"2026-01-01\"\n        text_in: 1\n",
		"same day":   "        source: s\n        date: \"2026-01-01\"\n        text_in: 1\n",
		"no source":  "        date: \"2026-01-01\"\n        text_in: 1\n",
		"nested":     "        source: s\n        date: \"2026-01-01\"\n        text_in: 1\n        dated: [{from: \"2027-01-01\", source: s, date: \"2026-01-01\", text_in: 2}]\n",
		"no prices":  "        source: s\n        date: \"2026-01-01\"\n",
		"half price": "        source: s\n        date: \"2026-01-01\"\n        text_in: 1.5\n",
	}
	for name, day := range bad {
		table := datedTable + "      - from: " + day + "\n" + extra[name]
		if _, err := billing.LoadPrices([]byte(table)); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: %v; want an error naming its line", name, err)
		}
	}
}

// A stored record is priced again at its own created_at: the preview of
// a dated table changes the record made after the day and leaves the one
// before.
func TestRepriceUsesTheEntryValidAtTheRecord(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	days := map[string]string{"cs_before": "2026-10-06 12:00:00+00", "cs_after": "2026-10-08 12:00:00+00"}
	for s, day := range days {
		rec := billing.Record{
			UserID: "alice", SessionID: s, TurnID: "t_1", Kind: billing.KindChat, Provider: "openai", Model: "gpt-6-luna",
			Usage:       billing.Usage{TextIn: 1_000_000, TextCachedIn: 400_000, TextOut: 100_000},
			UsageSource: billing.SourceProviderReported,
		}
		if _, err := fx.ledger.Write(ctx, fx.pool, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET created_at = $1::timestamptz WHERE session_id = $2`, day, s); err != nil {
			t.Fatal(err)
		}
	}
	table := strings.Replace(datedTable, "m-dated", "gpt-6-luna", 1)
	var out repricing
	rec := post(t, fx.ledger.HandleReprice, "/v1/admin/costs/reprice?from=2026-10-01&to=2026-10-31", []byte(table))
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(out.Models) != 1 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	// Before the 7th: 1,200,000 + 80,000 + 1,000,000; after: the cached
	// 400,000 at $0.10, 40,000.
	if m := out.Models[0]; m.Records != 2 || m.New != 2_280_000+2_240_000 || m.NewUnpriced != 0 {
		t.Fatalf("%+v; want 2 records repriced to %d", m, 2_280_000+2_240_000)
	}
}

// The embedded table keeps Sonnet 5.5's two cache-read prices: $0.20 per
// 1M before 2026-10-07, $0.10 from that day.
func TestSonnet55CacheReadByDay(t *testing.T) {
	t.Parallel()
	p, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	u := billing.Usage{TextIn: 1_000_000, TextCachedIn: 1_000_000}
	for at, want := range map[time.Time]int64{
		time.Date(2026, 10, 6, 23, 0, 0, 0, time.UTC): 200_000,
		time.Date(2026, 10, 7, 0, 0, 0, 0, time.UTC):  100_000,
	} {
		if got, err := p.At(at).Cost(billing.Line{Model: "claude-sonnet-5-5", Usage: u}); err != nil || got != want {
			t.Errorf("at %s: %d, %v; want %d", at, got, err, want)
		}
	}
}
