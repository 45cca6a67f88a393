package database_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// Real failures from a real server and a real pool, each classified the one
// way every package now shares.
func TestErrorClassifiesRealFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	pool := pgtest.NewPool(t, url, 2)

	// A port nothing listens on: the connect is refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := ln.Addr().String()
	ln.Close()
	refused, err := pgxpool.New(ctx, "postgres://nobody@"+refusedAddr+"/x?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()

	closed := pgtest.NewPool(t, url, 1)
	closed.Close()

	// A connection the network drops under a statement.
	drop := newDroppingProxy(t, url)
	dropped, err := pgxpool.New(ctx, drop.url)
	if err != nil {
		t.Fatal(err)
	}
	defer dropped.Close()

	timedOut, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()

	cases := []struct {
		name string
		run  func() error
		want apierr.Code
	}{
		{"refused", func() error { _, err := refused.Exec(ctx, "select 1"); return err }, apierr.Unavailable},
		{"closed pool", func() error { _, err := closed.Exec(ctx, "select 1"); return err }, apierr.Unavailable},
		{"dropped under a statement", func() error {
			time.AfterFunc(200*time.Millisecond, drop.drop)
			var v any
			return dropped.QueryRow(ctx, "select pg_sleep($1)", 5).Scan(&v)
		}, apierr.Unavailable},
		{"deadline", func() error { _, err := pool.Exec(timedOut, "select pg_sleep(1)"); return err }, apierr.Unavailable},
		{"statement timeout", func() error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "set local statement_timeout = 10"); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, "select pg_sleep(1)")
			return err
		}, apierr.Unavailable},
		{"unique violation", func() error {
			_, err := pool.Exec(ctx, "create temp table u (k int primary key); insert into u values (1), (1)")
			return err
		}, apierr.Conflict},
		{"syntax error", func() error { _, err := pool.Exec(ctx, "selec 1"); return err }, apierr.Internal},
		{"NUL in text", func() error { _, err := pool.Exec(ctx, "select $1::text", "a\x00b"); return err }, apierr.Internal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil {
				t.Fatal("the statement succeeded; want a failure")
			}
			got := apierr.From(database.Error("op", err))
			if got.Code != tc.want {
				t.Fatalf("code %s, want %s (cause %v)", got.Code, tc.want, err)

			}
			if tc.want == apierr.Unavailable && got.RetryAfter < 1 {
				t.Fatalf("retry_after %d, want >= 1", got.RetryAfter)
			}
		})
	}
	if !database.IsDataException(func() error { _, err := pool.Exec(ctx, "select $1::text", "a\x00b"); return err }()) {
		t.Fatal("a NUL in text is not a data exception")
	}
}

// droppingProxy forwards connections to a PostgreSQL server until drop
// closes them all, as a failing network would.
type droppingProxy struct {
	url   string
	mu    sync.Mutex
	conns []net.Conn
}

func newDroppingProxy(t *testing.T, dbURL string) *droppingProxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	target := u.Host
	u.Host = ln.Addr().String()
	p := &droppingProxy{url: u.String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.drop)
	return p
}

func (p *droppingProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
