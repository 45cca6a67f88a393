package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

const testSecret = "e2e-test-secret-that-is-32-bytes-or-more"

func TestMain(m *testing.M) {
	// The SIGTERM test re-runs this binary as a real gateway process.
	switch os.Getenv("VOXGATE_TEST_CHILD") {
	case "serve":
		os.Exit(childServe())
	case "sim": // the soak's provider, out of the measured process
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := run(ctx, []string{"sim", "--addr", "127.0.0.1:0"}, os.Getenv, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startMain boots the real Main on :0 against dbURL.
func startMain(t *testing.T, dbURL string, mutate func(*config.Config)) (*Main, *logbuf.Buffer) {
	t.Helper()
	env := map[string]string{"VOXGATE_DATABASE_URL": dbURL, "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 4
	cfg.Database.SpoolDir = t.TempDir()
	if mutate != nil {
		mutate(cfg)
	}
	logs := &logbuf.Buffer{}
	m := &Main{Config: cfg, Logger: newLogger(logs)}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, logs
}

func get(t *testing.T, url, tok string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	m, logs := startMain(t, pgtest.URL(t), nil)

	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == "VOXGATE_JWT_SECRET" {
			return testSecret
		}
		return ""
	}
	if err := run(context.Background(), []string{"token", "--sub", "e2e-user", "--plan", "pro", "--ttl", "10m"}, env, &out, &errOut); err != nil {
		t.Fatalf("voxgate token: %v (%s)", err, errOut.String())
	}
	tok := strings.TrimSpace(out.String())

	status, body := get(t, m.URL()+"/v1/me", tok)
	if want := `{"user_id":"e2e-user","role":"user","plan":"pro","usage":{`; status != 200 || !strings.HasPrefix(body, want) {
		t.Fatalf("/v1/me: got %d %s, want 200 %s", status, body, want)
	}
	status, body = get(t, m.URL()+"/metrics", "")
	if want := `voxgate_http_requests_total{code="200",route="GET /v1/me"} 1`; status != 200 || !strings.Contains(body, want) {
		t.Fatalf("/metrics lacks %q", want)
	}
	if !strings.Contains(body, "voxgate_db_pool_max_connections 4") {
		t.Fatal("/metrics lacks the database pool gauges")
	}
	if strings.Contains(body, "/v1/me\"") && !strings.Contains(body, "GET /v1/me") {
		t.Fatal("metrics are labelled by path, not by route pattern")
	}
	if !strings.Contains(logs.String(), `"route":"GET /v1/me"`) {
		t.Fatalf("no access log line for /v1/me:\n%s", logs)
	}
	if strings.Contains(logs.String(), tok) || strings.Contains(logs.String(), testSecret) {
		t.Fatal("the logs contain the token or the secret")
	}
}

func TestReadyzFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	proxy := pgtest.NewProxy(t, pgtest.URL(t))
	// The proxy's 1 s connect timeout makes a frozen database fail fast;
	// this test only cuts it (connections refused at once), and under
	// -race on a loaded machine the first connection can take longer.
	m, _ := startMain(t, strings.Replace(proxy.URL, "connect_timeout=1", "connect_timeout=10", 1), nil)
	waitStatus(t, m.URL()+"/readyz", 200)

	proxy.Cut()
	waitStatus(t, m.URL()+"/readyz", 503)
	proxy.Restore()
	waitStatus(t, m.URL()+"/readyz", 200) // no restart needed

	m.Server.Drain()
	waitStatus(t, m.URL()+"/readyz", 503)
	if status, _ := get(t, m.URL()+"/healthz", ""); status != 200 {
		t.Fatalf("/healthz while draining: got %d, want 200", status)
	}
}

// waitStatus polls url until it answers want, for at most 15 s.
func waitStatus(t *testing.T, url string, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	testkit.Eventually(t, ctx, fmt.Sprintf("%s to answer %d", url, want), func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == want
	})
}

// SIGTERM while a slow request is in flight: /readyz turns 503, the request
// completes, and the process exits 0.
func TestSIGTERMDrains(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		"VOXGATE_TEST_CHILD=serve",
		"VOXGATE_TEST_SPOOL_DIR="+t.TempDir(),
		"VOXGATE_DATABASE_URL="+pgtest.URL(t),
		"VOXGATE_JWT_SECRET="+testSecret,
		"VOXGATE_ADDR=127.0.0.1:0",
	)
	stdout, _ := cmd.StdoutPipe()
	var stderr logbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var base string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "URL="); ok {
			base = u
			break
		}
	}
	if base == "" {
		t.Fatalf("child did not start: %s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)

	type result struct {
		status int
		body   string
		err    error
	}
	slow := make(chan result, 1)
	inFlight := make(chan struct{})
	go func() {
		defer close(inFlight)
		resp, err := http.Get(base + "/slow") // returns once the route has begun its answer
		if err != nil {
			slow <- result{err: err}
			return
		}
		inFlight <- struct{}{}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- result{status: resp.StatusCode, body: string(b)}
	}()
	<-inFlight // the slow request is in flight
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, base+"/readyz", 503)
	r := <-slow
	if r.err != nil || r.status != 200 || r.body != "started\ndone" {
		t.Fatalf("slow request: got %d %q %v, want 200 started, done", r.status, r.body, r.err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v, want 0; logs:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "shut down cleanly") {
		t.Fatalf("no clean-shutdown log line:\n%s", stderr.String())
	}
}

// childServe is the gateway process of TestSIGTERMDrains: the real serve
// path, plus a /slow route that begins its answer at once (so the test
// knows it is in flight) and ends it 1.5 s later.
func childServe() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	cfg, err := config.Load("", os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.Database.MaxConns = 2
	cfg.Database.SpoolDir = os.Getenv("VOXGATE_TEST_SPOOL_DIR")
	cfg.Server.DrainDelay = time.Second
	m := &Main{Config: cfg, Logger: newLogger(os.Stderr), Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				io.WriteString(w, "started\n")
				http.NewResponseController(w).Flush()
				// measurement window: the request stays in flight past the
				// 1 s drain delay, so the drain is seen to wait for it.
				time.Sleep(1500 * time.Millisecond)
				io.WriteString(w, "done")
				return
			}
			h.ServeHTTP(w, r)
		})
	}}
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("URL=%s\n", m.URL())
	if err := serveUntilDone(ctx, m); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
