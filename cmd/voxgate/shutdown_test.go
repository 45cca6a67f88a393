package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// listeningAddr waits for serve's "voxgate listening" log line and returns
// its address.
func listeningAddr(t *testing.T, logs *logbuf.Buffer, exited <-chan error) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "voxgate listening" {
				return rec.Addr
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited before listening: %v\n%s", err, logs)
		case <-deadline:
			t.Fatalf("serve not listening after 20s:\n%s", logs)
		case <-time.After(20 * time.Millisecond): // polls the log serve writes
		}
	}
}

// SIGTERM with the database frozen (issue 21.13): the real serve path,
// with voice and chat on and a chat turn streaming, returns within
// shutdown_timeout + 2s whatever the database does. The turn, cut by the
// shutdown, cannot reach the database; its record and settlement are
// spooled, and the next start on the same spool completes them once the
// database is back.
func TestSIGTERMWithTheDatabaseFrozenIsBounded(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Faults: []sim.Fault{
		{Endpoint: "/v1/chat/completions", Kind: sim.FaultTimeout, AfterChunks: 3}}})
	dbURL := pgtest.URL(t)
	proxy := pgtest.NewProxy(t, dbURL)
	spoolDir := t.TempDir()
	const shutdownTimeout = 2 * time.Second
	cfgPath := filepath.Join(t.TempDir(), "voxgate.yaml")
	yaml := "server:\n  shutdown_timeout: 2s\ndatabase:\n  max_conns: 4\n  spool_dir: " + spoolDir + "\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"VOXGATE_DATABASE_URL": proxy.URL, "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0",
		"VOXGATE_CONFIG": cfgPath, "OPENAI_API_KEY": simtest.TestKey, "OPENAI_BASE_URL": ts.URL + "/v1"}
	ctx, sigterm := context.WithCancel(context.Background()) // what signal.NotifyContext does on SIGTERM
	defer sigterm()
	logs := &logbuf.Buffer{}
	exited := make(chan error, 1)
	go func() {
		exited <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, io.Discard, logs)
	}()
	base := "http://" + listeningAddr(t, logs, exited)

	resp := postChat(t, context.Background(), base, mint(t, "alice", "", "pro"), `{"message":"hello there"}`)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != "event: content" {
	}
	proxy.Freeze()
	defer proxy.Thaw()
	start := time.Now()
	sigterm()
	select {
	case err := <-exited:
		t.Logf("serve returned: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still running 30s after SIGTERM with the database frozen:\n%s", logs)
	}
	took, limit := time.Since(start), shutdownTimeout+2*time.Second
	t.Logf("SIGTERM to exit with the database frozen: %s (bound %s)", took.Round(time.Millisecond), limit)
	// A loaded machine is given 0.8 s more; a Close that let the spool
	// wait out its own RetryFor (3 s) after the turn was cut at the 2 s
	// timeout would take 5 s, past it.
	if took > limit+800*time.Millisecond {
		t.Errorf("SIGTERM to exit with the database frozen: got %s, want at most %s (+0.8s for this machine)", took.Round(time.Millisecond), limit)
	}
	entries, err := os.ReadDir(spoolDir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("spool after shutdown: got %v (%v), want one directory for the database", entries, err)
	}
	jobs, _ := filepath.Glob(filepath.Join(spoolDir, entries[0].Name(), "*.job"))
	if len(jobs) != 1 || !strings.HasPrefix(filepath.Base(jobs[0]), "chat_turn_end.") {
		t.Fatalf("spooled jobs after shutdown: got %v, want the turn's end", jobs)
	}

	proxy.Thaw()
	m, mlogs := startMain(t, dbURL, func(c *config.Config) {
		c.Database.SpoolDir = spoolDir
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1" // chat on: it completes its kind
	})
	pool := pgtest.NewPool(t, dbURL, 1)
	count := func(sql string) int {
		var n int
		if err := pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The spool removes a job's file after the database took it, so the
	// file count is waited for too, not read once the rows are in (under
	// a CPU hog the removal came after that read).
	pending := func() int { n, _ := m.Spool.Pending(); return n }
	deadline := time.After(10 * time.Second)
	for count(`SELECT count(*) FROM usage_records WHERE kind = 'chat' AND user_id = 'alice'`) != 1 ||
		count(`SELECT count(*) FROM quota_tickets WHERE user_id = 'alice'`) != 0 || pending() != 0 {
		select {
		case <-deadline:
			t.Fatalf("the spooled turn's record and settlement were not completed, or its job not removed (%d left), 10s after the next start:\n%s", pending(), mlogs)
		case <-time.After(20 * time.Millisecond): // polls what the new replica's spool does on its own
		}
	}
}
