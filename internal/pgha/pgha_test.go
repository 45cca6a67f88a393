package pgha

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voxgate/voxgate/internal/testkit"
)

// The pair is what it claims: the standby follows the primary's writes,
// refuses its own (25006), and after the primary stops and the standby is
// promoted, the multi-host URL reaches it and writes there.
func TestStandbyFollowsAndTakesOverAfterPromotion(t *testing.T) {
	p := Start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exec(ctx, DirectURL(p.Primary), `CREATE TABLE t (v int); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	standby, err := pgx.Connect(ctx, DirectURL(p.Standby))
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close(ctx)
	if got := standby.PgConn().ParameterStatus("in_hot_standby"); got != "on" {
		t.Fatalf("standby's in_hot_standby: got %q, want on", got)
	}
	replayed, cancelReplay := context.WithTimeout(ctx, 10*time.Second)
	defer cancelReplay()
	testkit.Eventually(t, replayed, "the standby to replay the primary's insert", func() bool {
		var n int
		return standby.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n) == nil && n == 1
	})
	_, err = standby.Exec(ctx, `INSERT INTO t VALUES (2)`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Fatalf("a write on the standby: got %v, want SQLSTATE 25006", err)
	}

	// With the primary up, the multi-host URL lands on it.
	if port := connectPort(t, ctx, p.URL()); port != p.Primary.Port {
		t.Fatalf("multi-host URL connected to port %d, want the primary's %d", port, p.Primary.Port)
	}
	if err := p.Primary.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Stopped primary, standby not yet promoted: no server takes writes,
	// and read-write refuses the standby.
	if c, err := pgx.Connect(ctx, p.URL()); err == nil {
		c.Close(ctx)
		t.Fatal("multi-host URL connected with no primary; target_session_attrs=read-write must refuse the standby")
	}
	if err := p.Standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	if port := connectPort(t, ctx, p.URL()); port != p.Standby.Port {
		t.Fatalf("after promotion the multi-host URL connected to port %d, want the promoted standby's %d", port, p.Standby.Port)
	}
	if err := exec(ctx, p.URL(), `INSERT INTO t VALUES (3)`); err != nil {
		t.Fatalf("a write through the multi-host URL after promotion: %v", err)
	}
	if got := standby.PgConn().ParameterStatus("in_hot_standby"); got != "off" {
		// The server reports the change on connections open across the
		// promotion once they next read from it.
		var one int
		_ = standby.QueryRow(ctx, `SELECT 1`).Scan(&one)
		if got = standby.PgConn().ParameterStatus("in_hot_standby"); got != "off" {
			t.Fatalf("in_hot_standby after promotion on a connection open across it: got %q, want off", got)
		}
	}
}

// A kill -9 of the primary leaves a pid file behind and a dead server;
// Postmaster sees it gone, and the standby is promoted.
func TestKilledPrimaryIsGoneAndStandbyPromotes(t *testing.T) {
	p := Start(t, Options{Sync: true})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	// Synchronous: the commit returns once the standby has it.
	if err := exec(ctx, DirectURL(p.Primary), `CREATE TABLE t (v int); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := p.Primary.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Primary.WaitGone(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, p.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after kill -9 and promotion: got %d rows (%v), want the synchronously committed 1", n, err)
	}
}

func connectPort(t *testing.T, ctx context.Context, dbURL string) int {
	t.Helper()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	return c.PgConn().Conn().RemoteAddr().(*net.TCPAddr).Port
}
