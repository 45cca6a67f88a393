package billing_test

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
)

// In every zone, a range's days each equal the records whose local time
// falls in them and sum exactly to the range's total, whether the range's
// edges are midnights or fall inside a rollup bucket. Kolkata is +05:30;
// Berlin's week holds the October change from +02:00 to +01:00 (a 25-hour
// day).
func TestSummaryDaysInAnyZone(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	seed(t, fx.pool, 1500, "alice", "bob", "carol")
	ctx := context.Background()
	all, err := pageAll(ctx, fx.ledger, billing.Filter{From: oct1, To: nov1.AddDate(0, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ tz, from, to string }{
		{"UTC", "2026-10-01", "2026-11-01"},
		{"America/Los_Angeles", "2026-10-01", "2026-11-01"},
		{"Asia/Kolkata", "2026-10-01", "2026-11-01"},
		{"Europe/Berlin", "2026-10-22", "2026-10-29"},
		{"Asia/Kathmandu", "2026-10-03T10:07:00Z", "2026-10-19T23:59:59.5Z"},
		// A historical offset (+00:19:32 until 1937): midnights off the
		// bucket grid are answered from the records.
		{"Europe/Amsterdam", "1930-01-01", "1930-01-03"},
	}
	for _, c := range cases {
		t.Run(c.tz, func(t *testing.T) {
			loc, err := time.LoadLocation(c.tz)
			if err != nil {
				t.Fatal(err)
			}
			rec := get(t, fx.ledger.HandleSummary, "/v1/admin/costs/summary?group_by=day&tz="+c.tz+"&from="+c.from+"&to="+c.to)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var s struct {
				From, To time.Time
				TZ       string
				Groups   []struct {
					Key        string
					Records    int64
					CostMicros json.Number `json:"cost_micros"`
				}
				Total struct {
					Records    int64
					CostMicros json.Number `json:"cost_micros"`
				}
			}
			dec := json.NewDecoder(strings.NewReader(rec.Body.String()))
			dec.UseNumber()
			if err := dec.Decode(&s); err != nil {
				t.Fatal(err)
			}
			if s.TZ != c.tz {
				t.Fatalf("tz %q, want %q", s.TZ, c.tz)
			}
			if len(c.from) == 10 {
				d, _ := time.Parse(time.DateOnly, c.from)
				if want := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc); !s.From.Equal(want) {
					t.Fatalf("from %v, want %v (the zone's midnight)", s.From, want)
				}
			}
			wantDay, wantN := map[string]int64{}, map[string]int64{}
			var wantTotal int64
			for _, r := range all {
				if r.CreatedAt.Before(s.From) || !r.CreatedAt.Before(s.To) {
					continue
				}
				day := r.CreatedAt.In(loc).Format(time.DateOnly)
				wantN[day]++
				if r.CostMicros != nil {
					wantDay[day] += *r.CostMicros
					wantTotal += *r.CostMicros
				}
			}
			if len(s.Groups) != len(wantN) {
				t.Fatalf("%d days, want %d: %+v", len(s.Groups), len(wantN), s.Groups)
			}
			sum := new(big.Int)
			var n int64
			for _, g := range s.Groups {
				got, _ := new(big.Int).SetString(g.CostMicros.String(), 10)
				if got.Int64() != wantDay[g.Key] || g.Records != wantN[g.Key] {
					t.Errorf("day %s: %s micro-USD in %d records, want %d in %d", g.Key, got, g.Records, wantDay[g.Key], wantN[g.Key])
				}
				sum.Add(sum, got)
				n += g.Records
			}
			if sum.String() != s.Total.CostMicros.String() || sum.Int64() != wantTotal || n != s.Total.Records {
				t.Fatalf("days sum to %s in %d records; total %s in %d; records %d", sum, n, s.Total.CostMicros, s.Total.Records, wantTotal)
			}
		})
	}
}

// A bad zone is 400, never UTC by default.
func TestSummaryRefusesABadZone(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, tz := range []string{"Mars/Olympus", "Local", "../../etc/passwd", "", strings.Repeat("A", 100)} {
		rec := get(t, fx.ledger.HandleSummary, "/v1/admin/costs/summary?tz="+tz)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "INVALID_REQUEST") {
			t.Errorf("tz=%q: %d %s", tz, rec.Code, rec.Body)
		}
	}
}

// The rollups follow every change to the records: a replayed write adds
// nothing, late usage moves the figures, a deleted record leaves, and a
// range answered from rollups equals one answered from records alone,
// whether the changes are still deltas or folded.
func TestRollupsFollowTheRecords(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	r := voiceRecord("vs_roll")
	r.CreatedAt = billing.Stamp() // written again below with its stamp, as a retry is
	first, err := fx.ledger.Write(ctx, fx.pool, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.ledger.Write(ctx, fx.pool, r); err != nil {
		t.Fatal(err)
	}
	late := voiceRecord("vs_late")
	late.UsageSource, late.Usage, late.Transcription = billing.SourceNone, billing.Usage{}, billing.Usage{}
	if _, err := fx.ledger.Write(ctx, fx.pool, late); err != nil {
		t.Fatal(err)
	}
	attached, err := fx.ledger.AttachUsage(ctx, fx.pool, voiceRecord("vs_late"))
	if err != nil {
		t.Fatal(err)
	}
	gone := voiceRecord("vs_gone")
	if _, err := fx.ledger.Write(ctx, fx.pool, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.pool.Exec(ctx, `DELETE FROM usage_records WHERE session_id = 'vs_gone'`); err != nil {
		t.Fatal(err)
	}
	want := new(big.Int).SetInt64(*first.CostMicros + *attached.CostMicros)
	// Whole buckets (rollups and their pending deltas) and a range whose
	// edges cut every bucket, before the fold and after it.
	summary := func(when string) {
		t.Helper()
		now := time.Now()
		whole, err := fx.ledger.Summarize(ctx, billing.Filter{From: now.Add(-time.Hour).Truncate(time.Hour), To: now.Add(time.Hour).Truncate(time.Hour)}, "model")
		if err != nil {
			t.Fatal(err)
		}
		if whole.Total.Records != 2 || whole.Total.CostMicros.String() != want.String() {
			t.Fatalf("%s: summary %d records, %s; want 2, %s", when, whole.Total.Records, whole.Total.CostMicros, want)
		}
	}
	summary("before the fold")
	if n, err := fx.ledger.Fold(ctx); err != nil || n != 6 {
		t.Fatalf("folded %d deltas (%v); want 6: three writes, an update's two, a delete's one", n, err)
	}
	for _, table := range []string{"usage_rollups", "usage_user_rollups",
		"usage_user_spans WHERE width = '1 hour'", "usage_user_spans WHERE width = '1 day'"} {
		var records int64
		var cost string
		if err := fx.pool.QueryRow(ctx, `SELECT sum(records)::bigint, sum(cost_micros)::text FROM `+table).Scan(&records, &cost); err != nil {
			t.Fatal(err)
		}
		if records != 2 || cost != want.String() {
			t.Fatalf("%s hold %d records, %s micro-USD; want 2, %s", table, records, cost, want)
		}
	}
	summary("after the fold")
}

// FuzzParseZone: tz is untrusted; it is a zone or a 400, never a panic,
// and never the server's own zone.
func FuzzParseZone(f *testing.F) {
	for _, s := range []string{"UTC", "Asia/Kolkata", "Local", "../etc/passwd", "", "Europe/Berlin\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		loc, err := billing.ParseZone(name)
		if err != nil {
			if apierr.CodeOf(err) != apierr.InvalidRequest {
				t.Fatalf("code %s", apierr.CodeOf(err))
			}
			return
		}
		if loc == time.Local && name != "UTC" && name != "" {
			t.Fatalf("%q gave the server's zone", name)
		}
	})
}
