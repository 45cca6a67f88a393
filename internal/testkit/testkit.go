// Package testkit is what the gateway's tests share: how long a test waits
// for an event before it fails, waiting on a condition, an injectable
// clock, and a simulator on loopback. It imports no domain package (the
// simulator imports none either), so every package's tests may use it;
// the service graph below voice and chat is package testgraph.
package testkit

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const (
	// Wait bounds how long a test waits for something it expects to happen
	// before it fails. Only a failing test reaches it, so it is generous: on
	// a loaded 2-core machine what takes milliseconds can take seconds.
	Wait = 10 * time.Second
	// Poll is how often a wait looks again at state nothing signals.
	Poll = 5 * time.Millisecond
	// ProviderTimeout is the provider clients' request timeout in service
	// tests: well above the simulator's zero latency under load, well below
	// Wait so a hung request fails as itself.
	ProviderTimeout = 3 * time.Second
)

// Quiet is a logger that drops everything.
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// NewSim starts a simulator with cfg, zero-latency unless cfg says
// otherwise, and returns it with its base URL (without /v1).
func NewSim(tb testing.TB, cfg sim.Config) (*sim.Server, string) {
	tb.Helper()
	s, ts := StartSim(tb, cfg, false)
	return s, ts.URL
}

// StartSim starts a simulator with cfg on a test server (TLS when tls),
// closed when the test ends.
func StartSim(tb testing.TB, cfg sim.Config, tls bool) (*sim.Server, *httptest.Server) {
	tb.Helper()
	if cfg.Latency == nil {
		cfg.Latency = simtest.ZeroLatency()
	}
	if tls {
		return simtest.NewTLSServer(tb, cfg)
	}
	return simtest.NewServer(tb, cfg)
}

// Eventually polls cond until it holds, and fails the test if it still
// does not by ctx's deadline (Wait when ctx has none). It is for state that nothing
// signals (a row, a counter, a goroutine count); what has a channel waits
// on the channel.
func Eventually(tb testing.TB, ctx context.Context, what string, cond func() bool) {
	tb.Helper()
	if !poll(ctx, cond) {
		tb.Fatalf("timed out waiting for %s", what)
	}
}

// WaitCancelled waits until the simulator's endpoint has counted a
// client's cancellation and has nothing in flight (it notices a
// disconnect asynchronously), and returns its stats.
func WaitCancelled(tb testing.TB, s *sim.Server, endpoint string) sim.EndpointStats {
	tb.Helper()
	var st sim.EndpointStats
	if !poll(context.Background(), func() bool {
		st = s.Stats().Endpoints[endpoint]
		return st.CancelledByClient == 1 && st.InFlight == 0
	}) {
		tb.Fatalf("sim stats: got %+v, want 1 cancelled and none in flight", st)
	}
	return st
}

// poll reports whether cond came to hold, looking every Poll until it
// does or ctx ends; a ctx without a deadline is given Wait.
func poll(ctx context.Context, cond func() bool) bool {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, Wait)
		defer cancel()
	}
	t := time.NewTicker(Poll)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return cond()
		case <-t.C:
		}
	}
	return true
}

// BothProtocols are HTTP/1.1 and HTTP/2 without TLS, as cmd/voxgate
// serves: a test server set to them takes either kind of client.
func BothProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// NodeClient is the node binary and the folder of the Node scripts that
// drive the official Node openai client (testdata/node at the module's
// root), once scripts/node-openai.sh has installed the client there.
// Under CI=true a missing one fails the test; elsewhere it skips, saying
// why.
func NodeClient(tb testing.TB) (node, dir string) {
	tb.Helper()
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s (CI needs it: run scripts/node-openai.sh)", why)
		}
		tb.Skipf("%s: run scripts/node-openai.sh to test the Node openai client", why)
	}
	root, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			tb.Fatal("testkit: no go.mod above the test's folder")
		}
		root = parent
	}
	dir = filepath.Join(root, "testdata", "node")
	node, err = exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		missing("the Node openai client is not installed")
	}
	return node, dir
}
