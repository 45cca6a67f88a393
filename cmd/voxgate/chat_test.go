package main

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// postChat starts POST /v1/chat and returns the open response.
func postChat(t *testing.T, ctx context.Context, url, tok, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// eventNames reads a stream to its end and lists its event names.
func eventNames(t *testing.T, resp *http.Response) []string {
	t.Helper()
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			out = append(out, name)
		}
	}
	return out
}

// Chat through the real Main and route table, against the simulator with
// the demo tools: a streamed turn runs a recipe search and ends with done;
// the conversation lists.
func TestChatRoutes(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t, demo.Migrations), func(c *config.Config) {
		c.Demo.Enabled = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	alice := mint(t, "alice", "", "pro")
	resp := postChat(t, context.Background(), m.URL(), alice, `{"message":"find me a pasta recipe"}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("POST /v1/chat: %d %s", resp.StatusCode, ct)
	}
	names := eventNames(t, resp)
	if len(names) < 4 || names[0] != "session" || names[len(names)-1] != "done" || !strings.Contains(strings.Join(names, " "), "tool") {
		t.Fatalf("events %v", names)
	}
	status, _, body := call(t, "GET", m.URL()+"/v1/chat/sessions", alice, nil)
	if status != 200 || !strings.Contains(body, `"message_count":2`) {
		t.Fatalf("sessions: %d %s", status, body)
	}
}

// VOXGATE_AI_ENABLED=false answers a turn 503 AI_FEATURE_DISABLED before
// any work; the conversation can still be read.
func TestChatKillSwitch(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
		c.AIEnabled = false
	})
	alice := mint(t, "alice", "", "pro")
	status, retry, body := call(t, "POST", m.URL()+"/v1/chat", alice, strings.NewReader(`{"message":"hi"}`))
	if status != 503 || errorCode(body) != "AI_FEATURE_DISABLED" || retry == "" {
		t.Fatalf("turn with AI off: %d %q %s", status, retry, body)
	}
	if status, _, body := call(t, "GET", m.URL()+"/v1/chat/sessions", alice, nil); status != 200 {
		t.Fatalf("sessions with AI off: %d %s", status, body)
	}
}

// Shutdown: a stream still running at the shutdown timeout is cancelled
// through the base context, and its usage is settled and recorded before
// the pool closes.
func TestChatShutdownRecordsUsage(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Faults: []sim.Fault{
		{Endpoint: "/v1/chat/completions", Kind: sim.FaultTimeout, AfterChunks: 3}}})
	dbURL := pgtest.URL(t)
	m, _ := startMain(t, dbURL, func(c *config.Config) {
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
		c.Server.ShutdownTimeout, c.Server.DrainDelay = 300*time.Millisecond, 0
	})
	resp := postChat(t, context.Background(), m.URL(), mint(t, "alice", "", "pro"), `{"message":"hello there"}`)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != "event: content" {
	}
	start := time.Now()
	_ = m.Close(context.Background()) // reports the cancelled request
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	pool := pgtest.NewPool(t, dbURL, 1)
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM usage_records WHERE kind = 'chat' AND user_id = 'alice'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d chat usage records after shutdown (%v), want 1", n, err)
	}
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM quota_tickets WHERE user_id = 'alice'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d tickets left after shutdown (%v), want 0", n, err)
	}
}
