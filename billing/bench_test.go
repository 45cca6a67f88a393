package billing_test

import (
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// BenchmarkFinanceMonth: a month holding 1,000,000 usage records. It
// reports the day summary's time (target ≤ 1 s) beside a bare count(*) of
// the same range on the same pool, and streams the month's CSV to a
// discarding writer while sampling the Go heap, to show it stays flat.
//
//	go test ./billing -run '^$' -bench FinanceMonth -benchtime 3x
//
// With -short (scripts/bench-smoke.sh) the month holds 10,000 records, to
// show the benchmark runs, not to measure it.
func BenchmarkFinanceMonth(b *testing.B) {
	fx := newFixture(b)
	ctx := context.Background()
	records := int64(1_000_000)
	if testing.Short() {
		records = 10_000
	}
	// The records spread evenly over October's 31 days, whatever their number.
	spacing := time.Duration(31*24*time.Hour) / time.Duration(records+1)
	if _, err := fx.pool.Exec(ctx, `INSERT INTO usage_records
		(user_id, session_id, kind, provider, model, text_in, text_cached_in, text_out, audio_in, audio_out,
		 duration_ms, cost_micros, price_version, usage_source, created_at)
		SELECT 'u' || (i % 5000), 'vs_' || i, CASE WHEN i % 3 = 0 THEN 'chat' ELSE 'voice' END, 'openai',
		       CASE WHEN i % 2 = 0 THEN 'gpt-realtime' ELSE 'gpt-realtime-mini' END,
		       1000, 800, 300, 600, 800, 61000, CASE WHEN i % 1000 = 0 THEN NULL ELSE 75240 END, 'v1', 'client_reported',
		       timestamptz '2026-10-01 00:00:00+00' + i * make_interval(secs => $1)
		FROM generate_series(1, $2::bigint) AS i`, spacing.Seconds(), records); err != nil {
		b.Fatal(err)
	}
	if _, err := fx.pool.Exec(ctx, `VACUUM ANALYZE usage_records`); err != nil {
		b.Fatal(err)
	}
	f := billing.Filter{From: oct1, To: nov1}
	var summary, count time.Duration
	b.ResetTimer()
	for range b.N {
		began := time.Now()
		var n int64
		if err := fx.pool.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE created_at >= $1 AND created_at < $2`,
			f.From, f.To).Scan(&n); err != nil || n != records {
			b.Fatalf("count %d, %v", n, err)
		}
		count += time.Since(began)
		began = time.Now()
		s, err := fx.ledger.Summarize(ctx, f, "day")
		if err != nil || s.Total.Records != records || len(s.Groups) != 31 {
			b.Fatalf("summary: %d records in %d days, %v", s.Total.Records, len(s.Groups), err)
		}
		summary += time.Since(began)
	}
	b.StopTimer()
	b.ReportMetric(summary.Seconds()/float64(b.N), "summary-s")
	b.ReportMetric(count.Seconds()/float64(b.N), "count-s")

	var peak atomic.Uint64
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	hwmBefore := vmHWM()
	var written countingWriter
	began := time.Now()
	if err := fx.ledger.Export(ctx, &written, f, billing.FormatCSV, nil); err != nil {
		b.Fatal(err)
	}
	took := time.Since(began)
	close(done)
	b.ReportMetric(float64(written)/(1<<20), "csv-MiB")
	b.ReportMetric(took.Seconds(), "csv-s")
	b.ReportMetric(float64(peak.Load()-min(before, peak.Load()))/(1<<20), "csv-peak-heap-MiB")
	b.ReportMetric(float64(hwmBefore)/1024, "rss-peak-before-MiB")
	b.ReportMetric(float64(vmHWM())/1024, "rss-peak-after-MiB")
	b.ReportMetric(0, "ns/op")
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return io.Discard.Write(p)
}

// vmHWM is the process's peak resident set in KiB (Linux), 0 elsewhere.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
