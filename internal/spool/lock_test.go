package spool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Two replicas on one directory each counted what the other drained
// (pending −45 and 45 with the directory empty) and completed some jobs
// twice; the second is now refused at start, naming the directory, until
// the first lets it go.
func TestASecondSpoolOnTheDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	st, dir := newStore(), t.TempDir()
	first := newTestSpool(t, st, dir)
	second, err := New(Params{Dir: dir})
	if err == nil {
		second.Close()
		t.Fatal("a second spool on the directory: got nil, want an error")
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "another") {
		t.Errorf("the refusal: got %q, want it to name %s and say another process holds it", err, dir)
	}
	first.Close()
	again, err := New(Params{Dir: dir})
	if err != nil {
		t.Fatalf("a spool on the directory its holder let go: %v", err)
	}
	again.Close()
}

// voxgate_spool_pending_jobs is what waits in the directory, whatever
// came and went: the same work spooled twice is one job, and a job an
// operator copies in (from a dead replica's volume) and the spool then
// completes does not take the gauge below zero.
func TestPendingGaugeIsTheDirectory(t *testing.T) {
	t.Parallel()
	st, dir := newStore(), t.TempDir()
	reg := prometheus.NewRegistry()
	s, err := New(Params{Dir: dir, RetryFor: 200 * time.Millisecond, Attempt: 100 * time.Millisecond, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Register("test", decodeTestJob(st))
	pending := func() float64 {
		t.Helper()
		v, err := testutil.GatherAndCount(reg, "voxgate_spool_pending_jobs")
		if err != nil || v != 1 {
			t.Fatalf("pending gauge: %d series, %v; want one", v, err)
		}
		return testutil.ToFloat64(s.metrics.pending)
	}

	st.setDown(true)
	for range 2 {
		if spooled, err := s.Do(context.Background(), "test", &testJob{ID: "same", st: st}); !spooled || err != nil {
			t.Fatalf("Do: got spooled %v, err %v; want spooled", spooled, err)
		}
	}
	if got := pending(); got != 1 {
		t.Errorf("pending after the same work spooled twice: got %v, want 1", got)
	}
	copied := `{"v":1,"kind":"test","key":"test:copied","job":{"id":"copied"}}`
	if err := os.WriteFile(filepath.Join(dir, "test.copied"+jobExt), []byte(copied), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 2 {
		t.Errorf("pending with a job copied in: got %v, want 2", got)
	}
	st.setDown(false)
	if n, err := s.Drain(context.Background()); n != 2 || err != nil {
		t.Fatalf("Drain: got %d, %v; want 2, nil", n, err)
	}
	if got := pending(); got != 0 {
		t.Errorf("pending with the directory drained: got %v, want 0", got)
	}
}

// voxgate_spool_oldest_job_age_seconds is the ledger's lag: the age of the
// oldest job still waiting, 0 once the directory is drained.
func TestOldestJobAge(t *testing.T) {
	t.Parallel()
	st, dir := newStore(), t.TempDir()
	s, err := New(Params{Dir: dir, RetryFor: 200 * time.Millisecond, Attempt: 100 * time.Millisecond, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Register("test", decodeTestJob(st))
	if got := testutil.ToFloat64(s.metrics.oldest); got != 0 {
		t.Fatalf("age with nothing spooled: %v, want 0", got)
	}
	st.setDown(true)
	for _, id := range []string{"old", "new"} {
		if spooled, err := s.Do(context.Background(), "test", &testJob{ID: id, st: st}); !spooled || err != nil {
			t.Fatalf("Do: got spooled %v, err %v; want spooled", spooled, err)
		}
	}
	// The first job was spooled ten minutes ago, as a replica's volume
	// after an outage would hold it.
	ten := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(filepath.Join(dir, fileName("test", "test:old")), ten, ten); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(s.metrics.oldest); got < 600 || got > 660 {
		t.Fatalf("age with a job ten minutes old: %v s", got)
	}
	st.setDown(false)
	if n, err := s.Drain(context.Background()); n != 2 || err != nil {
		t.Fatalf("Drain: got %d, %v; want 2, nil", n, err)
	}
	if got := testutil.ToFloat64(s.metrics.oldest); got != 0 {
		t.Fatalf("age once drained: %v, want 0", got)
	}
}
