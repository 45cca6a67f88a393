package quota

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// riderLog is where the tests' riders write: one row per admitted
// request, as a unit's pending audit row would be.
func riderLog(t *testing.T, ctx context.Context, s *Service) {
	t.Helper()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS quota_rider_test (user_id text NOT NULL, unit text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
}

func logRider(user, unit string) Rider {
	return Rider{
		Queue: func(b *pgx.Batch) {
			b.Queue(`INSERT INTO quota_rider_test (user_id, unit) SELECT $1, $2 WHERE `+AdmittedSQL+`($1)`, user, unit)
		},
		Abandoned: func(b *pgx.Batch) {
			b.Queue(`UPDATE quota_rider_test SET unit = unit || ' abandoned' WHERE user_id = $1 AND unit = $2`, user, unit)
		},
	}
}

func riderRows(t *testing.T, ctx context.Context, s *Service, user string) []string {
	t.Helper()
	rows, err := s.pool.Query(ctx, `SELECT unit FROM quota_rider_test WHERE user_id = $1 ORDER BY unit`, user)
	if err != nil {
		t.Fatal(err)
	}
	units, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return units
}

// TestRidersRunOnlyForAdmitted: many users at once, two requests each
// against one request a minute, so batches mix admitted and refused
// requests: every admitted request's rider wrote its row, no refused
// one's did.
func TestRidersRunOnlyForAdmitted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 1}), newClock(t0))
	riderLog(t, ctx, s)
	const users = 60
	var mu sync.Mutex
	admitted := map[string]string{} // user → unit
	var wg sync.WaitGroup
	start := make(chan struct{})
	prefix := user(t).UserID
	for i := range 2 * users {
		p := auth.Principal{UserID: fmt.Sprintf("%s-%d", prefix, i%users)}
		unit := fmt.Sprintf("unit-%d", i)
		wg.Go(func() {
			<-start
			_, err := s.Admit(ctx, p, Estimate{}, logRider(p.UserID, unit))
			switch {
			case err == nil:
				mu.Lock()
				admitted[p.UserID] = unit
				mu.Unlock()
			case apierr.CodeOf(err) != apierr.RateLimited:
				t.Errorf("%s: %v", p.UserID, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for i := range users {
		u := fmt.Sprintf("%s-%d", prefix, i)
		got := riderRows(t, ctx, s, u)
		if len(got) != 1 || got[0] != admitted[u] {
			t.Errorf("%s: rider rows %v, want exactly the admitted request's %q", u, got, admitted[u])
		}
	}
}

// TestFailingRiderFailsItsAdmission: a rider's statement shares the
// admission's transaction, so when it fails nothing of the admission
// stays: no ticket, no request counted, no lease.
func TestFailingRiderFailsItsAdmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 1, ConcurrentTurns: 1}), newClock(t0))
	p := user(t)
	bad := Rider{Queue: func(b *pgx.Batch) { b.Queue(`SELECT 1 / 0 WHERE `+AdmittedSQL+`($1)`, p.UserID) }}
	if _, err := s.Admit(ctx, p, Estimate{}, bad); err == nil {
		t.Fatal("an admission whose rider failed was admitted")
	}
	var tickets int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM quota_tickets WHERE user_id = $1`, p.UserID).Scan(&tickets); err != nil {
		t.Fatal(err)
	}
	if tickets != 0 {
		t.Errorf("%d tickets left by the failed batch", tickets)
	}
	// The minute's one request was not spent, and no lease is held.
	if _, err := s.Admit(ctx, p, Estimate{}); err != nil {
		t.Errorf("the next admission: %v, want admitted", err)
	}
}

// TestAbandonedAdmissionClosesItsRiders: a caller that goes away after
// the database admitted it gets an error; its ticket is released and, in
// the same transaction, its riders' Abandoned statements close what they
// opened.
func TestAbandonedAdmissionClosesItsRiders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{ConcurrentTurns: 1}), newClock(t0))
	riderLog(t, ctx, s)
	p := user(t)
	cctx, cancel := context.WithCancel(ctx)
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
		_, err = s.Admit(cctx, p, Estimate{}, logRider(p.UserID, "unit-1"))
		close(returned)
	}()
	<-returned
	if err == nil {
		t.Fatal("an abandoned admission returned a ticket")
	}
	waitIdle(t, s.admits)
	s.admits.abandoned.Wait()
	if got := riderRows(t, ctx, s, p.UserID); len(got) != 1 || got[0] != "unit-1 abandoned" {
		t.Errorf("rider rows %v, want the one row, closed", got)
	}
	mustAdmit(t, s, p, Estimate{}) // the lease is back
}
