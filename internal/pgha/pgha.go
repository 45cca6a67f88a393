// Package pgha gives tests a real PostgreSQL primary and a streaming
// standby of it, started from the local binaries (pglocal), so failover is
// tested against servers that fail over, not a stand-in. Each pair lives in
// a temporary directory on free loopback ports and is torn down when the
// test ends. Where no PostgreSQL binaries are installed the test is
// skipped with the reason.
package pgha

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/pglocal"
)

// Database is the database the pair serves to the test.
const Database = "voxgate"

// Pair is a primary and its standby.
type Pair struct {
	Primary, Standby *pglocal.Cluster
}

// Options shape a pair.
type Options struct {
	// Sync makes replication synchronous: a commit returns once the
	// standby has it, so an unplanned failover loses no acknowledged
	// commit.
	Sync bool
}

// Start starts a primary with the database Database and a standby
// streaming from it, both stopped and removed when t ends.
func Start(t testing.TB, opt Options) *Pair {
	t.Helper()
	if _, err := pglocal.Binaries(); err != nil {
		t.Skipf("pgha: %v", err)
	}
	// Not t.TempDir: its parent is private to this user, and the server
	// runs as the postgres user when tests run as root.
	dir, err := os.MkdirTemp("", "voxgate-pgha-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Pair{}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, c := range []*pglocal.Cluster{p.Standby, p.Primary} {
			if c != nil {
				if err := c.StopImmediate(ctx); err != nil {
					t.Logf("pgha: stop %s: %v", c.Dir, err)
				}
			}
		}
		_ = os.RemoveAll(dir)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if p.Primary, err = pglocal.StartPrimary(ctx, dir+"/primary"); err != nil {
		t.Fatalf("pgha: primary: %v", err)
	}
	if err := exec(ctx, p.Primary.URL, "CREATE DATABASE "+Database); err != nil {
		t.Fatalf("pgha: %v", err)
	}
	if p.Standby, err = pglocal.StartStandby(ctx, p.Primary, dir+"/standby"); err != nil {
		t.Fatalf("pgha: standby: %v\nprimary log:\n%s", err, p.Primary.Log())
	}
	if opt.Sync {
		// Only now: with no standby attached, a synchronous primary's
		// commits (CREATE DATABASE above) would wait forever.
		if err := exec(ctx, p.Primary.URL, "ALTER SYSTEM SET synchronous_standby_names = '*'"); err != nil {
			t.Fatalf("pgha: %v", err)
		}
		if err := exec(ctx, p.Primary.URL, "SELECT pg_reload_conf()"); err != nil {
			t.Fatalf("pgha: %v", err)
		}
	}
	return p
}

// URL is the gateway's view of the pair: both hosts, primary first, and
// target_session_attrs=read-write, so a connection goes to whichever
// takes writes.
func (p *Pair) URL() string {
	u, _ := url.Parse(pglocal.WithDatabase(p.Primary.URL, Database))
	u.Host = fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d", p.Primary.Port, p.Standby.Port)
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	// A host that is gone refuses at once on loopback; a short connect
	// timeout bounds a host that hangs instead.
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	return u.String()
}

// DirectURL is c's own URL to Database, whatever c's role.
func DirectURL(c *pglocal.Cluster) string { return pglocal.WithDatabase(c.URL, Database) }

// WaitStreaming waits until the primary has a standby streaming, so a
// commit from now on reaches it.
func (p *Pair) WaitStreaming(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, p.Primary.URL)
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	defer conn.Close(ctx)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'`).Scan(&n); err != nil {
			return fmt.Errorf("pgha: %w", err)
		}
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgha: no standby streaming: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond): // polls pg_stat_replication
		}
	}
}

func exec(ctx context.Context, dbURL, sql string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
