package spool

import (
	"context"
	"testing"
	"time"
)

// With a database that hangs, Do spools within RetryFor (and the file's
// write): a try begun just before the deadline is cut at it, not given a
// whole Attempt, so a caller's end stays within the documented bound.
func TestDoIsBoundedByRetryFor(t *testing.T) {
	t.Parallel()
	// The first try is cut at attempt, and the second, begun 50 ms later,
	// has only what is left of retryFor.
	const retryFor, attempt = 3 * time.Second, 2500 * time.Millisecond
	s, err := New(Params{Dir: t.TempDir(), RetryFor: retryFor, Attempt: attempt})
	if err != nil {
		t.Fatal(err)
	}
	st := newStore()
	st.hang, st.entered = make(chan struct{}), make(chan struct{}, 16)
	s.Register("test", decodeTestJob(st))
	start := time.Now()
	spooled, err := s.Do(context.Background(), "test", &testJob{ID: "hung", st: st})
	took := time.Since(start)
	if err != nil || !spooled {
		t.Fatalf("Do: spooled %v, %v; want spooled", spooled, err)
	}
	// Without the cut the second try would end at 2×attempt+50ms = 5.05s;
	// the bound leaves a loaded machine 1.3 s past retryFor, still below.
	if limit := retryFor + 1300*time.Millisecond; took > limit {
		t.Errorf("Do took %s with the database hanging, want at most %s (RetryFor %s)", took.Round(time.Millisecond), limit, retryFor)
	}
}
