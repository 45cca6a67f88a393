package database

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/pgha"
	"github.com/voxgate/voxgate/internal/testkit"
)

// A pool on a primary and its standby (multi-host URL, read-write): a
// connection whose server turns read-only leaves the pool, the write's
// 25006 is transient, and once the primary is stopped and the standby
// promoted, the same pool writes to the new primary.
func TestPoolFollowsAFailover(t *testing.T) {
	p := pgha.Start(t, pgha.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	pool, err := Open(ctx, p.URL(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE t (v int)`); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}

	// The primary turns read-only while the pool's one connection is open.
	admin := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, p.Primary.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
			t.Fatal(err)
		}
	}
	admin(`ALTER SYSTEM SET default_transaction_read_only = on`)
	// The reload reaches the pool's backend asynchronously: wait until it
	// reads the setting as on (a read is allowed, so the connection stays).
	testkit.Eventually(t, ctx, "the pool's backend to take the read-only setting", func() bool {
		var ro string
		return pool.QueryRow(ctx, `SHOW default_transaction_read_only`).Scan(&ro) == nil && ro == "on"
	})
	_, err = pool.Exec(ctx, `INSERT INTO t VALUES (1)`)
	if err == nil {
		t.Fatal("a write on a read-only primary succeeded")
	}
	if !Transient(err) {
		t.Fatalf("a write on a read-only primary: %v is not transient; a spooled job would be refused for good", err)
	}
	admin(`ALTER SYSTEM RESET default_transaction_read_only`)
	var pid2 int
	if err := pool.QueryRow(ctx, `INSERT INTO t VALUES (2) RETURNING pg_backend_pid()`).Scan(&pid2); err != nil {
		t.Fatalf("a write once the primary takes writes again: %v", err)
	}
	if pid2 == pid {
		t.Fatalf("the connection that met the read-only server (backend %d) stayed in the pool", pid)
	}

	// Planned failover: stop the primary, promote the standby.
	if err := p.Primary.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	lost := time.Now()
	promoted := make(chan error, 1)
	go func() {
		time.Sleep(time.Second) // measurement window: an operator's (or Patroni's) reaction time, part of the recovery measured
		promoted <- p.Standby.Promote(ctx)
	}()
	var port int
	failures := 0
	for {
		actx, acancel := context.WithTimeout(ctx, 3*time.Second)
		err := pool.QueryRow(actx, `INSERT INTO t VALUES (3) RETURNING inet_server_port()`).Scan(&port)
		acancel()
		if err == nil {
			break
		}
		failures++
		if !Transient(err) {
			t.Fatalf("a write during the failover failed for good: %v", err)
		}
		if time.Since(lost) > time.Minute {
			t.Fatalf("no write reached the new primary a minute after the old one stopped: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // measurement window: a client's retry pace, the resolution of the recovery time measured
	}
	if err := <-promoted; err != nil {
		t.Fatal(err)
	}
	t.Logf("primary stopped to first write on the promoted standby: %s (promotion begun after 1s; %d failed tries)", time.Since(lost).Round(time.Millisecond), failures)
	if port != p.Standby.Port {
		t.Fatalf("the write after failover landed on port %d, want the promoted standby's %d", port, p.Standby.Port)
	}
	if failures == 0 {
		t.Fatal("no write failed while no server took writes; the test did not see the failover")
	}
}
