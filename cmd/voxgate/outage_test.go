package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// wantUnavailable checks a 503 UNAVAILABLE with Retry-After.
func wantUnavailable(t *testing.T, what string, status int, retry, body string) {
	t.Helper()
	if status != 503 || errorCode(body) != "UNAVAILABLE" || retry == "" {
		t.Fatalf("%s: got %d %s (Retry-After %q), want 503 UNAVAILABLE with Retry-After", what, status, body, retry)
	}
}

// With PostgreSQL refusing connections, and with it hanging, every route
// that needs it answers 503 UNAVAILABLE with Retry-After, never 500, and a
// hanging database is given up on at server.request_timeout.
func TestDatabaseOutageIs503(t *testing.T) {
	t.Parallel()
	proxy := pgtest.NewProxy(t, pgtest.URL(t))
	m, _ := startMain(t, proxy.URL, func(c *config.Config) { c.Server.RequestTimeout = time.Second })
	base, user, admin := m.URL(), mint(t, "outage-user", "", ""), mint(t, "outage-admin", "admin", "")
	routes := []struct{ method, path, tok, body string }{
		{"GET", "/v1/me", user, ""},
		{"GET", "/v1/tools", user, ""},
		{"PUT", "/v1/admin/users/someone/plan", admin, `{"plan":"pro"}`},
	}
	for _, rt := range routes {
		if status, _, body := call(t, rt.method, base+rt.path, rt.tok, strings.NewReader(rt.body)); status != 200 {
			t.Fatalf("%s %s with the database up: got %d %s", rt.method, rt.path, status, body)
		}
	}

	proxy.Cut()
	// Twice each: the first request meets a broken pooled connection, the
	// next ones a refused connect.
	for i := range 2 {
		for _, rt := range routes {
			status, retry, body := call(t, rt.method, base+rt.path, rt.tok, strings.NewReader(rt.body))
			wantUnavailable(t, rt.method+" "+rt.path+" refused #"+string(rune('1'+i)), status, retry, body)
		}
	}
	proxy.Restore()
	waitStatus(t, base+"/readyz", 200)

	proxy.Freeze()
	for _, rt := range routes {
		start := time.Now()
		status, retry, body := call(t, rt.method, base+rt.path, rt.tok, strings.NewReader(rt.body))
		wantUnavailable(t, rt.method+" "+rt.path+" hanging", status, retry, body)
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("%s %s hanging: answered after %s, want about the 1s request timeout", rt.method, rt.path, took)
		}
	}
	proxy.Thaw()
}

// An idle connection's liveness ping at acquire gives up on a hanging
// database even for a caller without a deadline. The pool is opened as
// Main opens its own (database.Open) but used by nothing else: Main's
// background work would keep a connection fresh, and a fresh connection
// is not pinged, which made the case depend on the machine's timing.
func TestAcquireGivesUpOnAHangingDatabase(t *testing.T) {
	t.Parallel()
	proxy := pgtest.NewProxy(t, pgtest.URL(t))
	pool, err := database.Open(context.Background(), proxy.URL, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	// measurement window: the connection idles past the pool's 1 s
	// threshold, so the next acquire pings it; the idle time is the point.
	time.Sleep(1100 * time.Millisecond)
	proxy.Freeze()
	defer proxy.Thaw()
	done := make(chan error, 1)
	go func() {
		_, err := pool.Exec(context.Background(), "SELECT 1")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a query on the hanging database succeeded")
		}
	case <-time.After(30 * time.Second):
		// The bound: the ping's 2 s, then the connection the pool dials
		// in the dead one's place, 5 s a try, and a URL without sslmode
		// tries TLS and then plain: about 18 s measured on this machine.
		t.Fatal("a query without a deadline still waits on the hanging database after 30s")
	}
}

// Close returns within the shutdown timeout and a small margin whatever the
// database does: a request stuck on it is cancelled and answers 503, and a
// connection held by code that ignores every context does not hold Close.
func TestCloseIsBoundedWhenTheDatabaseHangs(t *testing.T) {
	t.Parallel()
	proxy := pgtest.NewProxy(t, pgtest.URL(t))
	held, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}) // the request to be caught by Close is in the gateway
	var m *Main
	env := map[string]string{"VOXGATE_DATABASE_URL": proxy.URL, "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 4
	cfg.Server.RequestTimeout = time.Minute
	cfg.Server.ShutdownTimeout = time.Second
	cfg.Database.SpoolDir = t.TempDir()
	m = &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{}), Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test-In-Flight") != "" {
				close(arrived)
			}
			if r.URL.Path != "/hold" {
				h.ServeHTTP(w, r)
				return
			}
			c, err := m.Pool.Acquire(context.Background())
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			close(held)
			<-release
			c.Release()
		})
	}}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	tok := mint(t, "close-user", "", "")
	if status, _, body := call(t, "GET", m.URL()+"/v1/me", tok, nil); status != 200 {
		t.Fatalf("/v1/me: got %d %s", status, body)
	}
	go http.Get(m.URL() + "/hold")
	<-held

	proxy.Freeze()
	defer proxy.Thaw()
	type result struct {
		status      int
		retry, body string
		err         error
	}
	inFlight := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", m.URL()+"/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Test-In-Flight", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			inFlight <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		inFlight <- result{resp.StatusCode, resp.Header.Get("Retry-After"), string(b), nil}
	}()
	<-arrived // in flight, and bound to wait on the frozen database

	start := time.Now()
	err = m.Close(context.Background())
	took := time.Since(start)
	if limit := cfg.Server.ShutdownTimeout + 4*time.Second; took > limit {
		t.Fatalf("Close took %s with the database hanging, want at most %s", took, limit)
	}
	if err == nil {
		t.Fatal("Close returned nil; want it to report the cancelled requests and the held connection")
	}
	select {
	case r := <-inFlight:
		if r.err != nil {
			t.Fatalf("/v1/me in flight at shutdown: %v, want a 503 answer", r.err)
		}
		wantUnavailable(t, "/v1/me in flight at shutdown", r.status, r.retry, r.body)
	case <-time.After(5 * time.Second):
		t.Fatal("the request in flight was never answered")
	}
}
