package quota

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// TestDatabaseClock: without a test clock every window, lease and
// reservation follows the database's clock, not the replica's. The test
// sets the database's clock an hour ahead of this process's, by putting a
// statement_timestamp() of its own first on the search_path of one pool.
func TestDatabaseClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	setup := pgtest.NewPool(t, dbURL, 1)
	if _, err := setup.Exec(ctx, `CREATE SCHEMA skew;
		CREATE FUNCTION skew.statement_timestamp() RETURNS timestamptz LANGUAGE sql STABLE
		AS $$ SELECT pg_catalog.statement_timestamp() + interval '1 hour' $$`); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", "skew,pg_catalog,public")
	u.RawQuery = q.Encode()
	s := mustService(t, pgtest.NewPool(t, u.String(), 2),
		onePlan(config.Plan{RequestsPerMinute: 5, MaxSessionSeconds: 60}), nil)
	dbNow := time.Now().Add(time.Hour)
	near := func(what string, got, want time.Time) {
		t.Helper()
		if d := got.Sub(want); d < -5*time.Second || d > 5*time.Second {
			t.Errorf("%s: got %v, want about %v (the database's clock)", what, got, want)
		}
	}

	p := user(t)
	tk := mustAdmit(t, s, p, Estimate{})
	near("lease expiry", tk.ExpiresAt(), dbNow.Add(LeaseTTL))
	if err := tk.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	near("renewed lease expiry", tk.ExpiresAt(), dbNow.Add(LeaseTTL))
	r, err := s.ReserveVoice(ctx, p, p.UserID+"-v")
	if err != nil {
		t.Fatal(err)
	}
	near("voice reservation expiry", r.ExpiresAt, dbNow.Add((60+voiceGraceS)*time.Second))
	rep, err := s.Report(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	minute := rep.Usage[ReasonMinute]
	if end := *minute.ResetsAt; end.Before(dbNow.Add(-5*time.Second)) || end.After(dbNow.Add(65*time.Second)) {
		t.Errorf("end of the minute: got %v, want within a minute after %v (the database's clock)", end, dbNow)
	}
	if minute.Used != 2 {
		t.Errorf("got %d requests this minute, want 2 (the turn and the voice start)", minute.Used)
	}
	at, err := s.SetPlan(ctx, p.UserID, "p")
	if err != nil {
		t.Fatal(err)
	}
	near("plan updated_at", at, dbNow)
}
