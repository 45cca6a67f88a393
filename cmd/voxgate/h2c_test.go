package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A load balancer that speaks HTTP/2 without TLS to its backends carries
// several streamed turns over one connection; HTTP/1.1 clients are served
// on the same port (every other test uses one).
//
// The client is given exactly one connection (Transport.NewClientConn),
// so what is asserted is the gateway's part, whatever the scheduler does:
// every request arrives as HTTP/2 from that one connection, and the three
// turns are in flight on it at once (each is held until all three have
// arrived, which only a multiplexed connection allows). Counting a pooled
// Transport's dials measured the client's pool instead: it hands a new
// connection to the pool just after giving it to the request that dialed
// it, and requests that look in between dial their own.
func TestChatOverHTTP2(t *testing.T) {
	t.Parallel()
	const turns = 3
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})

	type seen struct {
		path   string
		proto  int
		remote string
	}
	var (
		mu       sync.Mutex
		requests []seen
	)
	arrived, together := make(chan struct{}, turns), make(chan struct{})
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests = append(requests, seen{r.URL.Path, r.ProtoMajor, r.RemoteAddr})
			mu.Unlock()
			if r.URL.Path == "/v1/chat" {
				arrived <- struct{}{}
				select {
				case <-together:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	m := startMainWrapped(t, wrap, func(c *config.Config) {
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})

	var dials atomic.Int64
	tr := &http.Transport{
		Protocols: new(http.Protocols),
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	tr.Protocols.SetUnencryptedHTTP2(true)
	conn, err := tr.NewClientConn(context.Background(), "http", strings.TrimPrefix(m.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := &http.Client{Transport: conn}

	resp, err := client.Get(m.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("/healthz over %s, want HTTP/2", resp.Proto)
	}

	toks := make([]string, turns)
	for i := range toks {
		toks[i] = mint(t, "h2-user-"+string(rune('a'+i)), "", "pro")
	}
	var wg sync.WaitGroup
	for i, tok := range toks {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", m.URL()+"/v1/chat", strings.NewReader(`{"message":"hello"}`))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
				t.Errorf("turn %d: %s %d", i, resp.Proto, resp.StatusCode)
			}
			names := eventNames(t, resp)
			if len(names) < 3 || names[0] != "session" || names[len(names)-1] != "done" {
				t.Errorf("turn %d: events %v", i, names)
			}
		})
	}
	// A bound on a failure, not a guess at the machine's speed: on a
	// connection that could not multiplex, the second turn never arrives.
	bound := time.NewTimer(time.Minute)
	defer bound.Stop()
	for range turns {
		select {
		case <-arrived:
		case <-bound.C:
			t.Fatalf("the %d turns were never in flight at once on the one connection", turns)
		}
	}
	close(together)
	wg.Wait()

	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections dialed for one client connection, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 1+turns {
		t.Fatalf("requests: got %+v, want the probe and %d turns", requests, turns)
	}
	for _, r := range requests {
		if r.proto != 2 || r.remote != requests[0].remote {
			t.Errorf("%s: HTTP/%d from %s, want HTTP/2 from the one connection (%s)", r.path, r.proto, r.remote, requests[0].remote)
		}
	}
}

// startMainWrapped is startMain with m.Wrap set, for a test that watches
// the requests as the gateway receives them.
func startMainWrapped(t *testing.T, wrap func(http.Handler) http.Handler, mutate func(*config.Config)) *Main {
	t.Helper()
	env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 4
	cfg.Database.SpoolDir = t.TempDir()
	mutate(cfg)
	m := &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{}), Wrap: wrap}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}
