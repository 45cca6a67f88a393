package quota

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
)

// TestBatchCancelledCallerTicketReleased: a caller whose context ends while
// its batch is in flight gets an error, and the ticket the database granted
// it is released at once (not left to the lease TTL); the request itself
// stays counted.
func TestBatchCancelledCallerTicketReleased(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), onePlan(config.Plan{ConcurrentTurns: 1, TokensPerDay: 100}), newClock(t0))
	p := user(t)
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	var once sync.Once
	s.admits.afterQuery = func() {
		once.Do(func() {
			cancel()   // the caller goes away after the database admitted it…
			<-returned // …and has returned before the answer is delivered
		})
	}
	var err error
	go func() {
		_, err = s.Admit(ctx, p, Estimate{Tokens: 100})
		close(returned)
	}()
	<-returned
	if apierr.CodeOf(err) != apierr.Unavailable {
		t.Fatalf("got %v, want UNAVAILABLE (context cancelled)", err)
	}
	waitIdle(t, s.admits)
	s.admits.abandoned.Wait()

	r, err := s.Report(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Usage[ReasonConcurrent].Used; got != 0 {
		t.Errorf("got %d leases held, want 0 (released)", got)
	}
	if got := r.Usage[ReasonTokens].Used; got != 0 {
		t.Errorf("got %d tokens reserved, want 0 (released)", got)
	}
	if got := r.Usage[ReasonMinute].Used; got != 1 {
		t.Errorf("got %d requests this minute, want 1 (it reached the database)", got)
	}
	mustAdmit(t, s, p, Estimate{Tokens: 100}) // the slot and the tokens are back
}

// TestBatchCancelledWhileQueued: a caller that gives up before its request
// is sent leaves nothing behind: the request is never sent.
func TestBatchCancelledWhileQueued(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 10}), newClock(t0))
	s.admits.maxInFlight = 1
	p := user(t)
	hold, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.admits.afterQuery = func() {
		once.Do(func() { close(held); <-hold }) // the first batch stays in flight
	}
	first := make(chan error, 1)
	go func() {
		_, err := s.Admit(context.Background(), p, Estimate{})
		first <- err
	}()
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := s.Admit(ctx, p, Estimate{}) // queued behind the first
		second <- err
	}()
	testkit.Eventually(t, context.Background(), "the second admission queued", func() bool {
		s.admits.mu.Lock()
		defer s.admits.mu.Unlock()
		return len(s.admits.queue) > 0
	})
	cancel()
	if err := <-second; apierr.CodeOf(err) != apierr.Unavailable {
		t.Fatalf("queued call: got %v, want UNAVAILABLE (context cancelled)", err)
	}
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	r, err := s.Report(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Usage[ReasonMinute].Used; got != 1 {
		t.Errorf("got %d requests this minute, want 1 (the cancelled one never sent)", got)
	}
}

// TestBatchUsersIndependent: many users at once on one replica, each
// sending two requests against a per-minute limit of 1: every user gets
// exactly one, whatever batches the requests travel in.
func TestBatchUsersIndependent(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 1}), newClock(t0))
	ctx := context.Background()
	const users = 150
	var admitted [users]atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 * users {
		p := auth.Principal{UserID: fmt.Sprintf("indep-%d", i%users)}
		wg.Go(func() {
			<-start
			_, err := s.Admit(ctx, p, Estimate{})
			switch {
			case err == nil:
				admitted[i%users].Add(1)
			case apierr.CodeOf(err) != apierr.RateLimited:
				t.Errorf("%s: %v", p.UserID, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for i := range admitted {
		if got := admitted[i].Load(); got != 1 {
			t.Errorf("user %d: got %d admitted, want exactly 1", i, got)
		}
	}
}

// TestExactGlobalCapAcrossReplicas: 300 users at once on three replicas
// against a global cap of 25 a minute: exactly 25 are admitted, the rest
// refused with UNAVAILABLE, whether a batch fits in the cap's room or not.
func TestExactGlobalCapAcrossReplicas(t *testing.T) {
	t.Parallel()
	cfg := onePlan(config.Plan{})
	cfg.GlobalRequestsPerMinute = 25
	clk := newClock(t0)
	svcs := replicas(t, cfg, clk)
	ctx := context.Background()
	for round := range rounds {
		clk.Add(time.Minute) // a fresh global window
		got := race(t, svcs, 300, apierr.Unavailable, func(s *Service, i int) (bool, error) {
			tk, err := s.Admit(ctx, auth.Principal{UserID: fmt.Sprintf("g%d-%d", round, i)}, Estimate{})
			return tk != nil, err
		})
		if got != 25 {
			t.Fatalf("round %d: got %d admitted, want exactly 25", round, got)
		}
	}
}

// TestBatchRefusesDuplicateUsers: the SQL function refuses a batch with a
// user twice (its decisions would not see each other), whatever the caller.
func TestBatchRefusesDuplicateUsers(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 1}), newClock(t0))
	p := user(t)
	for _, users := range [][]string{{p.UserID, p.UserID}, {"new-" + p.UserID, "new-" + p.UserID}} {
		rows, err := s.pool.Query(context.Background(), admitBatchSQL, s.clockArg(),
			s.plans, users, []string{"p", "p"}, []string{"", ""}, []int64{0, 0}, []int64{0, 0}, []int64{0, 0},
			LeaseTTL.Seconds(), int64(0))
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
		}
		// An existing user is caught by the count after locking; a new one
		// already by the locking INSERT (it cannot create a row twice).
		if err == nil || !strings.Contains(err.Error(), "one request per user") &&
			!strings.Contains(err.Error(), "cannot affect row a second time") {
			t.Errorf("users %v: got %v, want the duplicate refused", users, err)
		}
	}
}

// TestUnusableUserID: an id PostgreSQL cannot key on is refused before it
// reaches a batch (where it would fail everyone's admission).
func TestUnusableUserID(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), onePlan(config.Plan{}), newClock(t0))
	for _, id := range []string{"a\x00b", "\xff\xfe", "a\nb", strings.Repeat("x", 257)} {
		_, err := s.Admit(context.Background(), auth.Principal{UserID: id}, Estimate{})
		if apierr.CodeOf(err) != apierr.Internal {
			t.Errorf("id of %d bytes: got %v, want INTERNAL", len(id), err)
		}
	}
	mustAdmit(t, s, auth.Principal{UserID: strings.Repeat("x", 256)}, Estimate{})
}

// waitIdle waits until b has no batch in flight: every release of an
// abandoned ticket has then been started.
func waitIdle(t *testing.T, b *admitBatcher) {
	t.Helper()
	testkit.Eventually(t, context.Background(), "the batcher idle", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.inFlight == 0
	})
}
