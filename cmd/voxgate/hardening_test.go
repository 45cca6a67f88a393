package main

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// With a metrics listener of its own, /metrics is served there and not on
// the public listener.
func TestMetricsOnlyOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) { c.Server.MetricsAddr = "127.0.0.1:0" })
	if status, _, body := call(t, "GET", m.URL()+"/metrics", "", nil); status != 404 || strings.Contains(body, "voxgate_") {
		t.Fatalf("/metrics on the public listener: got %d, want 404 without metrics", status)
	}
	if status, _, body := call(t, "GET", m.MetricsURL()+"/metrics", "", nil); status != 200 || !strings.Contains(body, "voxgate_http_requests_total") {
		t.Fatalf("/metrics on the metrics listener: got %d, want 200 with metrics", status)
	}
}

// Clients that promise a body and never send it are cut off after
// server.read_body_timeout, on a route that reads the body and on one that
// does not; none holds its connection.
func TestStalledBodiesDoNotHoldConnections(t *testing.T) {
	t.Parallel()
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) { c.Server.ReadBodyTimeout = 500 * time.Millisecond })
	admin := mint(t, "stall-admin", "admin", "")
	reqs := []string{
		"PUT /v1/admin/users/u/plan HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
		"PUT /v1/admin/users/u/plan HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", // unauthenticated
		"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
	}
	const perKind = 10
	var wg sync.WaitGroup
	errs := make(chan error, perKind*len(reqs))
	start := time.Now()
	for i := range perKind * len(reqs) {
		wg.Go(func() {
			c, err := net.Dial("tcp", m.Addr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if _, err := io.WriteString(c, reqs[i%len(reqs)]); err != nil {
				errs <- err
				return
			}
			// The server answers and closes: reading ends within the bound.
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.Copy(io.Discard, c); err != nil {
				errs <- fmt.Errorf("%q: connection still open: %v", strings.SplitN(reqs[i%len(reqs)], "\r\n", 2)[0], err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("%d stalled clients took %s to be cut off, want about 500ms", perKind*len(reqs), took)
	}
}

// A chunked body over server.max_body_bytes is 413 PAYLOAD_TOO_LARGE, like
// one whose declared length is over it.
func TestChunkedBodyOverTheCapIs413(t *testing.T) {
	t.Parallel()
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) { c.Server.MaxBodyBytes = 1024 })
	body := `{"plan":"` + strings.Repeat("p", 4096) + `"}`
	// io.MultiReader hides the length, so the client sends it chunked.
	status, _, resp := call(t, "PUT", m.URL()+"/v1/admin/users/u/plan", mint(t, "big-admin", "admin", ""), io.MultiReader(strings.NewReader(body)))
	if status != 413 || errorCode(resp) != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("chunked body over the cap: got %d %s, want 413 PAYLOAD_TOO_LARGE", status, resp)
	}
}
