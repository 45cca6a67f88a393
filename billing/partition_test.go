package billing_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// partitions lists the ledger's partitions by name, and which one holds
// each record of session.
func partitions(t *testing.T, fx fixture) map[string]bool {
	t.Helper()
	rows, err := fx.pool.Query(context.Background(), `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'usage_records'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[n] = true
	}
	return out
}

func holder(t *testing.T, fx fixture, session string) string {
	t.Helper()
	var n string
	if err := fx.pool.QueryRow(context.Background(), `SELECT tableoid::regclass::text FROM usage_records WHERE session_id = $1`, session).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestConcurrentCreatorsMakeOneSetOfPartitions(t *testing.T) {
	t.Parallel()
	fx := wideFixture(t, 6)
	ctx := context.Background()
	now := time.Date(2031, 3, 15, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	got := make([][]billing.Month, 4)
	errs := make([]error, 4)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = fx.ledger.EnsurePartitions(ctx, now) })
	}
	wg.Wait()
	created := map[string]int{}
	for i := range got {
		if errs[i] != nil {
			t.Fatalf("creator %d: %v", i, errs[i])
		}
		for _, m := range got[i] {
			if m.Status == "created" {
				created[m.Start.Format("2006_01")]++
			} else if m.Status != "exists" {
				t.Fatalf("creator %d: %s %s, want created or exists", i, m.Start.Format("2006-01"), m.Status)
			}
		}
	}
	have := partitions(t, fx)
	for _, m := range []string{"2031_03", "2031_04", "2031_05"} {
		if created[m] != 1 || !have["usage_records_"+m] {
			t.Fatalf("month %s created by %d creators, partition present %v; want exactly one creator and the partition", m, created[m], have["usage_records_"+m])
		}
	}
	if have["usage_records_2031_06"] {
		t.Fatal("a fourth month was created: want the month and the two after it")
	}
	// A record of April lands in April's partition, and its retry with the
	// same stamp stores nothing more.
	r := voiceRecord("vs_april")
	r.CreatedAt = time.Date(2031, 4, 30, 23, 59, 59, 999_999_000, time.UTC)
	first, err := fx.ledger.Write(ctx, fx.pool, r)
	if err != nil {
		t.Fatal(err)
	}
	again, err := fx.ledger.Write(ctx, fx.pool, r)
	if err != nil || again.ID != first.ID {
		t.Fatalf("the retry stored record %d (%v), the first %d: want the same", again.ID, err, first.ID)
	}
	if h := holder(t, fx, "vs_april"); h != "usage_records_2031_04" {
		t.Fatalf("the April record is in %s, want usage_records_2031_04", h)
	}
}

// A record of a month with no partition goes to DEFAULT and stays there:
// that month is then left to DEFAULT (status "default"), and the months
// around it are created as usual; nothing fails.
func TestARecordInDefaultBlocksNothing(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	r := voiceRecord("vs_far")
	r.CreatedAt = time.Date(2032, 7, 4, 10, 0, 0, 0, time.UTC)
	if _, err := fx.ledger.Write(ctx, fx.pool, r); err != nil {
		t.Fatal(err)
	}
	if h := holder(t, fx, "vs_far"); h != "usage_records_default" {
		t.Fatalf("a record of a month with no partition is in %s, want usage_records_default", h)
	}
	months, err := fx.ledger.EnsurePartitions(ctx, time.Date(2032, 7, 10, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatalf("creating partitions beside a DEFAULT row: %v", err)
	}
	want := []string{"default", "created", "created"}
	for i, m := range months {
		if m.Status != want[i] {
			t.Fatalf("%s: %s, want %s", m.Start.Format("2006-01"), m.Status, want[i])
		}
	}
	next := voiceRecord("vs_aug")
	next.CreatedAt = time.Date(2032, 8, 1, 0, 0, 0, 0, time.UTC)
	if _, err := fx.ledger.Write(ctx, fx.pool, next); err != nil {
		t.Fatal(err)
	}
	if h := holder(t, fx, "vs_aug"); h != "usage_records_2032_08" {
		t.Fatalf("an August record is in %s, want usage_records_2032_08", h)
	}
	// Another July record still goes to DEFAULT, beside the first.
	more := voiceRecord("vs_far2")
	more.CreatedAt = time.Date(2032, 7, 20, 0, 0, 0, 0, time.UTC)
	if _, err := fx.ledger.Write(ctx, fx.pool, more); err != nil {
		t.Fatal(err)
	}
	if h := holder(t, fx, "vs_far2"); h != "usage_records_default" {
		t.Fatalf("a second July record is in %s, want usage_records_default", h)
	}
}

// Retention drops a month's partition past it only once finance exported
// the month; the kept months' records and summaries are untouched, and a
// dropped month's summary still answers from the rollups.
func TestRetentionDropsOnlyExportedMonths(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	if _, err := fx.ledger.EnsurePartitions(ctx, time.Date(2030, 1, 15, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	jan := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	feb, mar := jan.AddDate(0, 1, 0), jan.AddDate(0, 2, 0)
	cost := map[time.Time]int64{}
	for i, at := range []time.Time{jan.Add(time.Hour), jan.Add(48 * time.Hour), feb.Add(time.Hour), feb.Add(72 * time.Hour), feb.Add(73 * time.Hour)} {
		r := voiceRecord(fmt.Sprintf("vs_ret_%d", i))
		r.CreatedAt = at
		w, err := fx.ledger.Write(ctx, fx.pool, r)
		if err != nil {
			t.Fatal(err)
		}
		cost[monthStart(at)] += *w.CostMicros
	}
	if _, err := fx.ledger.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	// January exported whole; February only for one user, which does not
	// count; nothing of March.
	if months, err := fx.ledger.RecordExport(ctx, billing.Filter{From: jan, To: feb}, billing.Manifest{Rows: 2}, billing.FormatCSV); err != nil || len(months) != 1 {
		t.Fatalf("recorded %v (%v), want January", months, err)
	}
	if months, err := fx.ledger.RecordExport(ctx, billing.Filter{From: feb, To: mar, UserID: "alice"}, billing.Manifest{Rows: 3}, billing.FormatCSV); err != nil || len(months) != 0 {
		t.Fatalf("a filtered export recorded %v (%v), want nothing", months, err)
	}
	before, err := fx.ledger.Summarize(ctx, billing.Filter{From: jan, To: feb}, "day")
	if err != nil {
		t.Fatal(err)
	}
	// Retention of two months in May 2030 reaches back to March: January
	// and February are past it.
	dropped, err := fx.ledger.DropExpired(ctx, time.Date(2030, 5, 10, 0, 0, 0, 0, time.UTC), 2)
	if err != nil {
		t.Fatal(err)
	}
	have := partitions(t, fx)
	if have["usage_records_2030_01"] || !have["usage_records_2030_02"] || !have["usage_records_2030_03"] {
		t.Fatalf("dropped %v; partitions left %v: want January dropped, February (not exported) and March kept", dropped, have)
	}
	var n int64
	if err := fx.pool.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE created_at >= $1 AND created_at < $2`, jan, mar).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d records left in January and February (%v), want February's 3", n, err)
	}
	kept, err := fx.ledger.Summarize(ctx, billing.Filter{From: feb, To: mar}, "day")
	if err != nil {
		t.Fatal(err)
	}
	if kept.Total.Records != 3 || kept.Total.CostMicros.String() != fmt.Sprint(cost[feb]) {
		t.Fatalf("February's summary: %d records, %s; want 3, %d", kept.Total.Records, kept.Total.CostMicros, cost[feb])
	}
	// Hours that cut February's buckets read its records: still there.
	edge, err := fx.ledger.Summarize(ctx, billing.Filter{From: feb.Add(72*time.Hour + 5*time.Minute), To: feb.Add(74 * time.Hour)}, "model")
	if err != nil || edge.Total.Records != 1 {
		t.Fatalf("February's cut range: %d records (%v), want 1", edge.Total.Records, err)
	}
	after, err := fx.ledger.Summarize(ctx, billing.Filter{From: jan, To: feb}, "day")
	if err != nil {
		t.Fatal(err)
	}
	if after.Total.Records != 2 || after.Total.CostMicros.String() != before.Total.CostMicros.String() ||
		before.Total.CostMicros.String() != fmt.Sprint(cost[jan]) {
		t.Fatalf("January's summary after the drop: %d records, %s; before %s; want 2 and %d from the rollups",
			after.Total.Records, after.Total.CostMicros, before.Total.CostMicros, cost[jan])
	}
	// An export that read other than what the ledger holds (a standby
	// behind: 2 of February's 3) records nothing.
	if months, err := fx.ledger.RecordExport(ctx, billing.Filter{From: feb, To: mar}, billing.Manifest{Rows: 2}, billing.FormatCSV); err == nil || len(months) != 0 {
		t.Fatalf("an export short of the ledger recorded %v (%v), want a conflict and nothing", months, err)
	}
	// February exported whole; then a record stamped in February arrives
	// (a spool replayed late): the month is no longer what was exported,
	// so it stays.
	if _, err := fx.ledger.RecordExport(ctx, billing.Filter{From: feb, To: mar}, billing.Manifest{Rows: 3}, billing.FormatCSV); err != nil {
		t.Fatal(err)
	}
	late := voiceRecord("vs_ret_late")
	late.CreatedAt = feb.Add(100 * time.Hour)
	if _, err := fx.ledger.Write(ctx, fx.pool, late); err != nil {
		t.Fatal(err)
	}
	if dropped, err := fx.ledger.DropExpired(ctx, time.Date(2030, 5, 10, 0, 0, 0, 0, time.UTC), 2); err != nil || contains(dropped, "usage_records_2030_02") {
		t.Fatalf("a record after February's export: dropped %v (%v), want February kept", dropped, err)
	}
	// Exported again with it, February goes.
	if _, err := fx.ledger.RecordExport(ctx, billing.Filter{From: feb, To: mar}, billing.Manifest{Rows: 4}, billing.FormatCSV); err != nil {
		t.Fatal(err)
	}
	if dropped, err := fx.ledger.DropExpired(ctx, time.Date(2030, 5, 10, 0, 0, 0, 0, time.UTC), 2); err != nil || !contains(dropped, "usage_records_2030_02") {
		t.Fatalf("after February's export: dropped %v (%v), want usage_records_2030_02", dropped, err)
	}
}

func monthStart(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
