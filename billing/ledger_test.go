package billing_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/voxgate/voxgate/billing"
)

type fixture struct {
	pool   *pgxpool.Pool
	ledger *billing.Ledger
	reg    *prometheus.Registry
}

func newFixture(t testing.TB) fixture { t.Helper(); return wideFixture(t, 4) }

func voiceRecord(session string) billing.Record {
	return billing.Record{
		UserID: "alice", SessionID: session, Kind: billing.KindVoice, Provider: "openai", Model: "gpt-realtime-2025-08-28",
		Usage:              billing.Usage{TextIn: 1200, TextCachedIn: 1000, TextOut: 300, AudioIn: 600, AudioCachedIn: 100, AudioOut: 800},
		TranscriptionModel: "gpt-4o-mini-transcribe",
		Transcription:      billing.Usage{AudioIn: 600, TextOut: 40},
		DurationMS:         61_000, UsageSource: billing.SourceClientReported,
	}
}

func TestWriteStoresAPricedRecordOnce(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	rec := voiceRecord("vs_1")
	// A retried end sends the stamp its first try took (Write's key).
	rec.CreatedAt = billing.Stamp()
	// 200 text in × 4 + 1,000 cached × 0.4 + 300 out × 16 + 500 audio in × 32
	// + 100 cached × 0.4 + 800 out × 64, then transcription 600 × 3 + 40 × 5:
	// (800 + 400 + 4,800 + 16,000 + 40 + 51,200) + (1,800 + 200) = 75,240.
	const want = 75_240
	var wg sync.WaitGroup
	got := make([]billing.Record, 5)
	errs := make([]error, 5)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = fx.ledger.Write(ctx, fx.pool, rec) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got[i].CostMicros == nil || *got[i].CostMicros != want {
			t.Fatalf("write %d: cost %v, want %d", i, got[i].CostMicros, want)
		}
		if got[i].ID != got[0].ID {
			t.Fatalf("write %d stored record %d, write 0 stored %d: a retried end wrote twice", i, got[i].ID, got[0].ID)
		}
	}
	var n int
	if err := fx.pool.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE session_id = 'vs_1'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d records (%v), want 1", n, err)
	}
	// Five concurrent writes, one record: the metric counts rows, not calls.
	if err := testutil.GatherAndCompare(fx.reg, strings.NewReader(`# HELP voxgate_billing_records_total Usage records written, by kind.
# TYPE voxgate_billing_records_total counter
voxgate_billing_records_total{kind="voice"} 1
`), "voxgate_billing_records_total"); err != nil {
		t.Fatal(err)
	}
	// The cost metric adds the one record's cost, once.
	mfs, err := fx.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var costs []string
	for _, mf := range mfs {
		if mf.GetName() == "voxgate_billing_cost_micros_total" {
			for _, m := range mf.GetMetric() {
				costs = append(costs, fmt.Sprintf("%s=%v", m.GetLabel()[0].GetValue(), m.GetCounter().GetValue()))
			}
		}
	}
	if fmt.Sprint(costs) != fmt.Sprintf("[voice=%d]", want) {
		t.Fatalf("voxgate_billing_cost_micros_total %v, want voice=%d", costs, want)
	}
	stored, ok, err := fx.ledger.SessionRecord(ctx, fx.pool, "vs_1")
	if err != nil || !ok {
		t.Fatalf("SessionRecord: %v, %v", ok, err)
	}
	if stored.PriceVersion == "" || stored.Tokens.TranscriptionAudioIn != 600 || stored.Tokens.AudioCachedIn != 100 || stored.Unpriced {
		t.Fatalf("stored record %+v", stored)
	}
	if _, ok, err := fx.ledger.SessionRecord(ctx, fx.pool, "vs_missing"); ok || err != nil {
		t.Fatalf("a session with no record: %v, %v", ok, err)
	}
}

func TestUnpricedRecordIsStoredWithoutCost(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	rec := voiceRecord("vs_unpriced")
	rec.Model = "gpt-realtime-next"
	got, err := fx.ledger.Write(ctx, fx.pool, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.CostMicros != nil || !got.Unpriced {
		t.Fatalf("cost %v, unpriced %v; want nil, true", got.CostMicros, got.Unpriced)
	}
	var cost *int64
	if err := fx.pool.QueryRow(ctx, `SELECT cost_micros FROM usage_records WHERE session_id = 'vs_unpriced'`).Scan(&cost); err != nil || cost != nil {
		t.Fatalf("stored cost %v (%v), want NULL", cost, err)
	}
	if n, err := testutil.GatherAndCount(fx.reg, "voxgate_billing_unpriced_records_total"); err != nil || n != 1 {
		t.Fatalf("unpriced metric series %d (%v), want 1", n, err)
	}
}

func TestWriteRefusesBadRecords(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	cases := map[string]func(*billing.Record){
		"kind":                    func(r *billing.Record) { r.Kind = "video" },
		"no user":                 func(r *billing.Record) { r.UserID = "" },
		"source":                  func(r *billing.Record) { r.UsageSource = "guessed" },
		"negative":                func(r *billing.Record) { r.Usage.TextOut = -1 },
		"cached above input":      func(r *billing.Record) { r.Usage.TextCachedIn = r.Usage.TextIn + 1 },
		"transcription, no model": func(r *billing.Record) { r.TranscriptionModel = "" },
		"negative duration":       func(r *billing.Record) { r.DurationMS = -1 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			r := voiceRecord("vs_bad_" + name)
			mutate(&r)
			if _, err := fx.ledger.Write(context.Background(), fx.pool, r); err == nil {
				t.Fatal("written; want an error")
			}
		})
	}
	var n int
	if err := fx.pool.QueryRow(context.Background(), `SELECT count(*) FROM usage_records`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d records stored (%v), want 0", n, err)
	}
}

// seed inserts n records spread over days starting at 2026-10-01 UTC, with
// given users, straight through SQL so their created_at can be set.
func seed(t *testing.T, pool *pgxpool.Pool, n int, users ...string) {
	t.Helper()
	_, err := pool.Exec(context.Background(), fmt.Sprintf(`INSERT INTO usage_records
		(user_id, session_id, kind, provider, model, text_in, text_out, audio_in, audio_out, duration_ms,
		 cost_micros, price_version, usage_source, created_at)
		SELECT (ARRAY[%s])[1 + i %% %d], 'vs_' || i, CASE WHEN i %% 3 = 0 THEN 'chat' ELSE 'voice' END, 'openai',
		       CASE WHEN i %% 2 = 0 THEN 'gpt-realtime' ELSE 'gpt-realtime-mini' END,
		       i, 2 * i, 3 * i, 4 * i, 1000 * i,
		       CASE WHEN i %% 17 = 0 THEN NULL ELSE 1234567 * i END, 'v1', 'client_reported',
		       timestamptz '2026-10-01 00:00:00+00' + (i * interval '37 minutes')
		FROM generate_series(1, %d) AS i`, quoteAll(users), len(users), n))
	if err != nil {
		t.Fatal(err)
	}
}

func quoteAll(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += "'" + s + "'"
	}
	return out
}

// Late usage is priced as a record written with it would be: the same cost,
// or unpriced and counted, and only once.
func TestAttachUsagePricesAsWriteDoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, model  string
		wantCost     *int64
		wantUnpriced float64
	}{
		{"priced", "gpt-realtime-2025-08-28", ptr(75_240), 0},
		{"unpriced model", "gpt-realtime-next", nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			ctx := context.Background()
			empty := billing.Record{UserID: "alice", SessionID: "vs_late", Kind: billing.KindVoice, Provider: "openai",
				Model: c.model, UsageSource: billing.SourceNone}
			if _, err := fx.ledger.Write(ctx, fx.pool, empty); err != nil {
				t.Fatal(err)
			}
			late := voiceRecord("vs_late")
			late.Model = c.model
			got, err := fx.ledger.AttachUsage(ctx, fx.pool, late)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCost(got.CostMicros, c.wantCost) || got.Unpriced != (c.wantCost == nil) {
				t.Fatalf("got cost %v, unpriced %v, want %v, %v", show(got.CostMicros), got.Unpriced, show(c.wantCost), c.wantCost == nil)
			}
			if _, err := fx.ledger.AttachUsage(ctx, fx.pool, late); err != nil {
				t.Fatal(err)
			}
			// An empty record costs nothing whatever its model; the attach
			// counts an unpriced record once, the repeat not at all.
			if got := unpricedCount(t, fx); got != c.wantUnpriced {
				t.Fatalf("got %v unpriced records counted, want %v", got, c.wantUnpriced)
			}
		})
	}
}

func ptr(n int64) *int64 { return &n }

func sameCost(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(c *int64) any {
	if c == nil {
		return "nil"
	}
	return *c
}

func unpricedCount(t *testing.T, fx fixture) float64 {
	t.Helper()
	mfs, err := fx.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "voxgate_billing_unpriced_records_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
