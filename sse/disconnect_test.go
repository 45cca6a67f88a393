package sse_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sse"
)

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readUntilContent reads a stream until its first content event.
func readUntilContent(t *testing.T, resp *http.Response) string {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	var session string
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"type":"session"`) {
			session = line[strings.Index(line, `"session_id":"`)+len(`"session_id":"`):]
			session = session[:strings.IndexByte(session, '"')]
		}
		if line == "event: content" {
			return session
		}
	}
	t.Fatalf("stream ended before any content (session %q)", session)
	return ""
}

// A client that leaves mid-stream has the upstream call cancelled within
// 500 ms, and the usage so far is settled and recorded.
func TestDisconnectCancelsUpstream(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Latency: &sim.Latency{}, Script: script(), Faults: []sim.Fault{
		{Endpoint: "/v1/chat/completions", Kind: sim.FaultTimeout, AfterChunks: 3}}}
	f := newFixture(t, options{simCfg: &cfg})
	ctx, cancel := context.WithCancel(context.Background())
	resp := f.do(t, ctx, call{user: "u1", body: map[string]any{"message": "tell me a story"}})
	sid := readUntilContent(t, resp)
	left := time.Now()
	cancel()
	resp.Body.Close()

	waitFor(t, "the sim to see the cancel", func() bool { return chatStats(f.sim).CancelledByClient >= 1 })
	st := chatStats(f.sim)
	if lag := st.LastCancelledAt.Sub(left); lag > 500*time.Millisecond {
		t.Errorf("upstream cancelled %v after the client left, want ≤ 500ms", lag)
	}
	waitFor(t, "the usage record", func() bool {
		return f.count(t, `SELECT count(*) FROM usage_records WHERE session_id = $1`, sid) == 1
	})
	var in, out int64
	var source string
	if err := f.pool.QueryRow(context.Background(), `SELECT text_in, text_out, usage_source FROM usage_records WHERE session_id = $1`,
		sid).Scan(&in, &out, &source); err != nil {
		t.Fatal(err)
	}
	if in == 0 || out == 0 || source != "server_observed" {
		t.Errorf("record in %d out %d source %s", in, out, source)
	}
	waitFor(t, "the ticket to settle", func() bool {
		return f.count(t, `SELECT count(*) FROM quota_tickets WHERE user_id = 'u1'`) == 0
	})
}

// Shutdown: a turn still running when the server cancels its requests
// (through the base context) ends, and its usage is still recorded.
func TestShutdownCancelsRunningTurn(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Latency: &sim.Latency{}, Script: script(), Faults: []sim.Fault{
		{Endpoint: "/v1/chat/completions", Kind: sim.FaultTimeout, AfterChunks: 3}}}
	f := newFixture(t, options{simCfg: &cfg})
	base, stop := context.WithCancel(context.Background())
	srv := httptest.NewUnstartedServer(routes(f.svc))
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Start()
	defer srv.Close()
	g := *f
	g.url = srv.URL
	resp := g.do(t, context.Background(), call{user: "u1", body: map[string]any{"message": "tell me a story"}})
	defer resp.Body.Close()
	sid := readUntilContent(t, resp)
	stop()
	// The request's context is the stream's too: once it is cancelled
	// the writer sends nothing more, so the stream just ends, without done.
	r := readReply(t, resp)
	for _, e := range r.Events {
		if e.Type == "done" || e.Type == "stream_complete" {
			t.Errorf("%s after the turn was cancelled", e.Type)
		}
	}
	waitFor(t, "the usage record", func() bool {
		return f.count(t, `SELECT count(*) FROM usage_records WHERE session_id = $1`, sid) == 1
	})
}

// A stream waiting on the model gets ": ping" comments.
func TestPings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{simCfg: &sim.Config{Latency: &sim.Latency{TTFT: 400 * time.Millisecond}, Script: script()}})
	sse.SetPingEvery(f.svc, 50*time.Millisecond)
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "hi"}})
	if r.Pings < 3 || r.last().Type != "done" {
		t.Errorf("%d pings, events %v", r.Pings, r.types())
	}
}
