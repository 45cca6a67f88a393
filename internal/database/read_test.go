package database_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgha"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

// On a primary the position is now: a read after it sees every commit.
func TestReadPositionOnThePrimary(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, pgtest.EmptyURL(t), 2)
	before := time.Now()
	p, err := database.ReadPosition(context.Background(), pool)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if p.Standby {
		t.Fatal("the test server says it is a standby")
	}
	// One machine, one clock: the server's now() falls between the two.
	if p.AsOf.Before(before.Add(-time.Second)) || p.AsOf.After(after.Add(time.Second)) {
		t.Fatalf("as_of %s, want between %s and %s", p.AsOf, before, after)
	}
	if p.Lag > time.Second {
		t.Fatalf("a primary's lag: got %s, want about 0", p.Lag)
	}
}

// On a standby the position follows replay: it covers a replayed commit,
// stays before a commit that is received but not replayed (replay
// paused), and the read pool shows exactly what the position says.
func TestReadPositionOnAStandby(t *testing.T) {
	pair := pgha.Start(t, pgha.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := pair.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	primary := pgtest.NewPool(t, pgha.DirectURL(pair.Primary), 2)
	read, err := database.OpenRead(ctx, pgha.DirectURL(pair.Standby), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()

	// A role with no privileges beyond its table, as a finance reader's
	// would be: the position must not need more.
	if _, err := primary.Exec(ctx, `CREATE TABLE t (v int); CREATE ROLE plain LOGIN PASSWORD 'plain-pw'; GRANT SELECT ON t TO plain`); err != nil {
		t.Fatal(err)
	}
	var first time.Time
	if err := primary.QueryRow(ctx, `INSERT INTO t VALUES (1) RETURNING clock_timestamp()`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if err := pair.WaitReplayed(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := database.ReadPosition(ctx, read)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Standby {
		t.Fatal("the read pool's server does not say it is a standby")
	}
	if p.AsOf.Before(first) {
		t.Fatalf("as_of %s is before a commit the standby has replayed (%s)", p.AsOf, first)
	}

	if err := pair.PauseReplay(ctx); err != nil {
		t.Fatal(err)
	}
	var second time.Time
	if err := primary.QueryRow(ctx, `INSERT INTO t VALUES (2) RETURNING clock_timestamp()`).Scan(&second); err != nil {
		t.Fatal(err)
	}
	// Received, so the standby knows the primary's WAL is ahead of its
	// replay: as_of must not claim the second row's time.
	if err := pair.WaitReceived(ctx); err != nil {
		t.Fatal(err)
	}
	p, err = database.ReadPosition(ctx, read)
	if err != nil {
		t.Fatal(err)
	}
	plainURL, _ := url.Parse(pgha.DirectURL(pair.Standby))
	plainURL.User = url.UserPassword("plain", "plain-pw")
	plain, err := database.OpenRead(ctx, plainURL.String(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if pp, err := database.ReadPosition(ctx, plain); err != nil || !pp.Standby || !pp.AsOf.Before(second) {
		t.Fatalf("paused, as a role without privileges: %+v (%v), want a standby's position before %s", pp, err, second)
	}
	var n int
	if err := plain.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("rows on the paused standby: got %d, want 1", n)
	}
	if !p.AsOf.Before(second) {
		t.Fatalf("paused: as_of %s, want before the unreplayed write at %s", p.AsOf, second)
	}
	if p.Lag < time.Since(second) {
		t.Fatalf("paused: lag %s, want at least the time since the unreplayed write (%s)", p.Lag, time.Since(second))
	}
	// The read pool refuses writes even where they could go.
	if _, err := read.Exec(ctx, `CREATE TEMP TABLE x (v int)`); database.SQLState(err) != database.ReadOnlyTransaction {
		t.Fatalf("a write through the read pool: got %v, want SQLSTATE %s", err, database.ReadOnlyTransaction)
	}

	if err := pair.ResumeReplay(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pair.WaitReplayed(ctx); err != nil {
		t.Fatal(err)
	}
	if p, err = database.ReadPosition(ctx, read); err != nil {
		t.Fatal(err)
	}
	if p.AsOf.Before(second) {
		t.Fatalf("resumed: as_of %s, want at or after the replayed write at %s", p.AsOf, second)
	}

	// Idle primary: no commit moves the replay timestamp, yet as_of keeps
	// up, from the primary's replies to the standby's pings (every
	// wal_receiver_timeout/2, here 1 s).
	for _, q := range []string{`ALTER SYSTEM SET wal_receiver_timeout = '2s'`, `SELECT pg_reload_conf()`} {
		if err := execOn(ctx, pair.Standby.URL, q); err != nil {
			t.Fatal(err)
		}
	}
	idleSince := time.Now()
	testkit.Eventually(t, ctx, "as_of to pass the last commit by 2 s on an idle primary", func() bool {
		p, err := database.ReadPosition(ctx, read)
		return err == nil && p.AsOf.After(idleSince.Add(2*time.Second))
	})
}

func execOn(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func TestOpenReadRefusesABadURL(t *testing.T) {
	t.Parallel()
	_, err := database.OpenRead(context.Background(), "postgres://u:secret@host:notaport/db", 2)
	if err == nil {
		t.Fatal("a bad URL opened")
	}
	if got := err.Error(); got != "database: read_url is not a valid database URL" {
		t.Fatalf("got %q", got)
	}
}
