package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// soakLoad is the load's outcome as its clients saw it.
type soakLoad struct {
	mu sync.Mutex
	// chat sessions whose turn streamed content (the provider was paid),
	// and voice sessions that started (seconds reserved, a tool run).
	chatSpent, voiceStarted []string
	turns, failures         int
}

func (l *soakLoad) add(f func(*soakLoad)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l)
}

// soakSnapshot is what must stay flat.
type soakSnapshot struct {
	goroutines int
	heap       uint64
	fds        int
	conns      int32
}

func (m *Main) soakSnapshot(t *testing.T) soakSnapshot {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("VOXGATE_SOAK_PROFILES"); dir != "" { // heap profiles, to find what grew
		f, err := os.CreateTemp(dir, "heap-*.pprof")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	return soakSnapshot{runtime.NumGoroutine(), ms.HeapAlloc, len(fds), m.Pool.Stat().TotalConns()}
}

// TestSoak is `make soak`: a mixed chat (with a tool loop), voice (start, a
// tool call, end with usage) load against one gateway for VOXGATE_SOAK (a
// duration: 2m by default from make, 30m for the real bar), with the
// database cut for a while in the middle. It reports goroutines, heap,
// open descriptors and pool connections after a warm-up and at the end,
// each measured with the load paused, and fails if one grew more than
// 10 % (past a small floor), or if a turn the provider was paid for, or a
// started voice session, has no usage record (or more than one) once the
// spool has drained. The simulator and the load's clients run in this
// process too, so the figures are theirs and the gateway's together.
func TestSoak(t *testing.T) {
	spec := os.Getenv("VOXGATE_SOAK")
	if spec == "" {
		t.Skip("set VOXGATE_SOAK to a duration (make soak)")
	}
	total, err := time.ParseDuration(spec)
	if err != nil || total < 20*time.Second {
		t.Fatalf("VOXGATE_SOAK=%q: want a duration of at least 20s", spec)
	}
	simURL := startSimProcess(t)
	dbURL := pgtest.URL(t, demo.Migrations)
	proxy := pgtest.NewProxy(t, dbURL)
	env := map[string]string{"VOXGATE_DATABASE_URL": proxy.URL, "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0",
		"VOXGATE_DEMO": "true", "OPENAI_API_KEY": simtest.TestKey, "OPENAI_BASE_URL": simURL + "/v1"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns, cfg.Database.SpoolDir = 10, t.TempDir()
	cfg.Quota.Plans["bench"] = config.BenchPlan()
	m := &Main{Config: cfg, Logger: slog.New(slog.DiscardHandler)} // logs kept in memory would count as growth
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	base := m.URL()
	client := &http.Client{Timeout: 30 * time.Second}
	load := &soakLoad{}
	var gate sync.RWMutex // workers hold it for reading per iteration; a snapshot takes it
	stop := make(chan struct{})
	var workers sync.WaitGroup
	const chatWorkers, voiceWorkers = 4, 2
	for i := range chatWorkers + voiceWorkers {
		tok := mint(t, fmt.Sprintf("soak-%d", i), "", "bench")
		work := soakChat
		if i >= chatWorkers {
			work = soakVoice
		}
		workers.Go(func() {
			tick := time.NewTicker(250 * time.Millisecond) // each worker's pace
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				gate.RLock()
				work(client, base, tok, n, load)
				gate.RUnlock()
			}
		})
	}
	quiet := func() soakSnapshot {
		gate.Lock()
		defer gate.Unlock()
		client.CloseIdleConnections()
		return m.soakSnapshot(t)
	}

	// measurement windows, all of them: the soak's duration is what it
	// measures, a warm-up, the load before the outage, the outage, the rest.
	time.Sleep(total / 10) // measurement window: warm-up, the load runs
	start := quiet()
	time.Sleep(total/2 - total/10) // measurement window: the load before the outage
	outage := min(10*time.Second, total/10)
	proxy.Cut()
	time.Sleep(outage) // measurement window: the database is down for this long under load
	proxy.Restore()
	time.Sleep(total - total/2 - outage) // measurement window: the load after the outage
	close(stop)
	workers.Wait()
	dctx, dcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer dcancel()
	testkit.Eventually(t, dctx, "the spool drained after the load ended", func() bool {
		n, _ := m.Spool.Pending()
		return n == 0
	})
	end := quiet()

	pool := pgtest.NewPool(t, dbURL, 1)
	records := func(kind string, ids []string) (missing, doubled int) {
		counts := map[string]int{}
		rows, err := pool.Query(context.Background(), `SELECT session_id, count(*) FROM usage_records WHERE kind = $1 GROUP BY 1`, kind)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				t.Fatal(err)
			}
			counts[id] = n
		}
		for _, id := range ids {
			switch counts[id] {
			case 0:
				missing++
			case 1:
			default:
				doubled++
			}
		}
		return missing, doubled
	}
	chatMissing, chatDoubled := records("chat", load.chatSpent)
	voiceMissing, voiceDoubled := records("voice", load.voiceStarted)
	t.Logf("soak %s, database cut for %s at the middle: %d requests (%d failed: refused or 503 during the outage)",
		total, outage, load.turns, load.failures)
	t.Logf("chat turns with content: %d, records missing %d, doubled %d", len(load.chatSpent), chatMissing, chatDoubled)
	t.Logf("voice sessions started: %d, records missing %d, doubled %d", len(load.voiceStarted), voiceMissing, voiceDoubled)
	if chatMissing+chatDoubled+voiceMissing+voiceDoubled > 0 || len(load.chatSpent) == 0 || len(load.voiceStarted) == 0 {
		t.Error("the ledger does not match what was spent: want exactly one record per paid turn and started session")
	}
	flat := func(what string, from, to, floor float64) {
		change := (to - from) / from * 100
		t.Logf("%-16s start %12.0f  end %12.0f  (%+.1f %%)", what, from, to, change)
		if to > from*1.1 && to-from > floor {
			t.Errorf("%s grew from %.0f to %.0f (%+.1f %%), want flat within 10 %%", what, from, to, change)
		}
	}
	flat("goroutines", float64(start.goroutines), float64(end.goroutines), 5)
	flat("heap bytes", float64(start.heap), float64(end.heap), 2<<20)
	flat("open fds", float64(start.fds), float64(end.fds), 5)
	flat("pool conns", float64(start.conns), float64(end.conns), 2)
}

// startSimProcess runs the simulator as a child process (this test binary
// as `voxgate sim`), so that what it keeps is not counted as the
// gateway's, and returns its base URL.
func startSimProcess(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VOXGATE_TEST_CHILD=sim")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "voxgate sim listening on "); ok {
			go io.Copy(io.Discard, stdout)
			return strings.Fields(rest)[0]
		}
	}
	t.Fatal("the simulator process did not start")
	return ""
}

// soakChat runs one chat turn, which searches recipes (a tool) and
// answers, and notes whether the provider streamed content.
func soakChat(client *http.Client, base, tok string, n int, load *soakLoad) {
	req, _ := http.NewRequest("POST", base+"/v1/chat", strings.NewReader(`{"message":"find me a pasta recipe"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		load.add(func(l *soakLoad) { l.turns++; l.failures++ })
		return
	}
	defer resp.Body.Close()
	var session string
	content := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev struct {
				Type      string `json:"type"`
				SessionID string `json:"session_id"`
			}
			if json.Unmarshal([]byte(data), &ev) == nil {
				content = content || ev.Type == "content"
				if ev.Type == "session" {
					session = ev.SessionID
				}
			}
		}
	}
	load.add(func(l *soakLoad) {
		l.turns++
		if resp.StatusCode != 200 {
			l.failures++
		}
		if content && session != "" {
			l.chatSpent = append(l.chatSpent, session)
		}
	})
}

// soakVoice runs one direct voice session: start, a tool call, an end
// with usage (a 503 end is spooled and completed later).
func soakVoice(client *http.Client, base, tok string, n int, load *soakLoad) {
	do := func(method, url, body string) (int, string) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := do("POST", base+"/v1/voice/sessions", `{"replace":true}`)
	var start struct {
		SessionID string `json:"session_id"`
	}
	if status != 201 || json.Unmarshal([]byte(body), &start) != nil {
		load.add(func(l *soakLoad) { l.turns++; l.failures++ })
		return
	}
	sess := base + "/v1/voice/sessions/" + start.SessionID
	do("POST", sess+"/tool-calls", fmt.Sprintf(`{"call_id":"c%d","name":"search_recipes","arguments":"{\"query\":\"pasta\"}"}`, n))
	status, _ = do("POST", sess+"/end", `{"usage":{"input_token_details":{"text_tokens":300},"output_token_details":{"audio_tokens":100}}}`)
	load.add(func(l *soakLoad) {
		l.turns++
		l.voiceStarted = append(l.voiceStarted, start.SessionID)
		if status != 200 {
			l.failures++
		}
	})
}
