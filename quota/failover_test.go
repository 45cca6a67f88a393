package quota

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// An admission whose statement committed but whose reply was lost (the
// primary went away between its commit and its answer, as in a failover):
// the caller gets a transient error and its client retries.
//
// Keyed (the client sent an Idempotency-Key, issue 44), the retry is
// answered at once with the ticket the lost admission was given: one
// request counted, one lease, one reservation, and settling it frees them.
// Unkeyed, the retry is a second request: the first stays counted and
// holds its concurrency lease and reservation until the lease TTL
// reclaims them, so with one concurrent turn the retry is refused for up
// to LeaseTTL and, once admitted, the one request the client made is
// counted twice (docs/operations.md, "PostgreSQL failover").
func TestAnAdmissionWhoseReplyIsLost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		key  string
	}{{"keyed", "retry-me-1"}, {"unkeyed", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lostReplyRetry(t, tc.key)
		})
	}
}

func lostReplyRetry(t *testing.T, key string) {
	dbURL := pgtest.URL(t)
	proxy := newReplyDropper(t, dbURL)
	pool, err := database.Open(context.Background(), proxy.url, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	direct := pgtest.NewPool(t, dbURL, 1)
	clk := newClock(t0)
	s := mustService(t, pool, onePlan(config.Plan{RequestsPerDay: 10, ConcurrentTurns: 1}), clk)
	est := Estimate{Tokens: 100, CostMicros: 10, Calls: 1, Key: key}

	// Warm the pool's one connection: the statement is prepared, so what
	// follows sends only its execution.
	mustAdmit(t, s, user(t), Estimate{})
	alice := user(t)
	proxy.dropReplies.Store(true)
	if _, err := s.Admit(context.Background(), alice, est); err == nil {
		t.Fatal("an admission whose reply was lost succeeded")
	} else if e, ok := errors.AsType[*apierr.Error](err); !ok || e.Code != apierr.Unavailable {
		t.Fatalf("an admission whose reply was lost: got %v, want UNAVAILABLE (the client may retry)", err)
	}
	proxy.dropReplies.Store(false)

	type counts struct{ requests, tickets, leases, resTokens int64 }
	counted := func() (c counts) {
		t.Helper()
		if err := direct.QueryRow(context.Background(), `SELECT
			(SELECT coalesce(sum(day_requests), 0) FROM quota_users WHERE user_id = $1),
			(SELECT count(*) FROM quota_tickets WHERE user_id = $1),
			(SELECT coalesce(sum(leases), 0) FROM quota_users WHERE user_id = $1),
			(SELECT coalesce(sum(res_tokens), 0) FROM quota_users WHERE user_id = $1)`, alice.UserID).
			Scan(&c.requests, &c.tickets, &c.leases, &c.resTokens); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c, want := counted(), (counts{1, 1, 1, 100}); c != want {
		t.Fatalf("after the lost reply: got %+v, want %+v (the statement committed)", c, want)
	}
	var lost int64
	if err := direct.QueryRow(context.Background(), `SELECT id FROM quota_tickets WHERE user_id = $1`, alice.UserID).Scan(&lost); err != nil {
		t.Fatal(err)
	}

	// The client's retry.
	tk, err := s.Admit(context.Background(), alice, est)
	if key == "" {
		if e, ok := errors.AsType[*apierr.Error](err); !ok || e.Code != apierr.ConcurrentLimit {
			t.Fatalf("the unkeyed retry: got %v, want CONCURRENT_LIMIT while the lost admission's lease lives", err)
		}
		clk.Add(LeaseTTL + time.Second)
		tk = mustAdmit(t, s, alice, est)
		if _, err := tk.Settle(context.Background(), Usage{Tokens: 50, CostMicros: 5, Calls: 1}); err != nil {
			t.Fatal(err)
		}
		if c := counted(); c.requests != 2 {
			t.Fatalf("after the unkeyed retry once the lease expired: %d requests counted, want 2 (the one request counted twice)", c.requests)
		}
		return
	}
	if err != nil {
		t.Fatalf("the keyed retry: got %v, want admitted on the lost admission's ticket", err)
	}
	if tk.ID != lost || tk.Daily.Requests != 1 || tk.Daily.ReservedTokens != 100 {
		t.Fatalf("the keyed retry: got ticket %d, day %+v; want ticket %d, 1 request, 100 tokens reserved", tk.ID, tk.Daily, lost)
	}
	if c, want := counted(), (counts{1, 1, 1, 100}); c != want {
		t.Fatalf("after the keyed retry: got %+v, want %+v (counted once)", c, want)
	}
	if _, err := tk.Settle(context.Background(), Usage{Tokens: 50, CostMicros: 5, Calls: 1}); err != nil {
		t.Fatal(err)
	}
	if c, want := counted(), (counts{1, 0, 0, 0}); c != want {
		t.Fatalf("after settling the keyed retry: got %+v, want %+v", c, want)
	}
}

// replyDropper is a TCP proxy to dbURL's server that can drop the server's
// replies: armed, it forwards what the client sends, and at the first byte
// of an answer closes the client's connection instead, so a statement runs
// (and commits) and its caller never learns it.
type replyDropper struct {
	url         string
	dropReplies atomic.Bool
}

func newReplyDropper(t *testing.T, dbURL string) *replyDropper {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = ln.Addr().String()
	p := &replyDropper{url: u.String()}
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			conns.Go(func() { p.pipe(client, server) })
		}
	}()
	return p
}

func (p *replyDropper) pipe(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	go func() { _, _ = io.Copy(server, client); server.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if p.dropReplies.Load() {
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
