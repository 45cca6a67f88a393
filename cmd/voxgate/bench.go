package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/capacity"
)

const benchSummary = `Measures what a chat completion costs: the gateway (run as a child
process, 'voxgate serve') and a neutral mock provider (in this process: a fixed
answer of 10 chunks 10 ms apart, with usage) get the same load, for each number
of concurrent clients, streamed and not. It reports the latency the gateway adds
over calling the mock directly, requests per second, and CPU per request of the
gateway process and of the PostgreSQL processes serving it (from /proc, when the
server runs on this machine), with how many requests per second a PostgreSQL of
N cores would serve at that cost. With each streamed case it times a streamed
POST /v1/responses to its first text delta the same way (--responses), beside
the completions figure. Mode chat runs streamed POST /v1/chat turns (a new
session each) to their first content event instead, with the same figures per
turn. The database is VOXGATE_DATABASE_URL (or
--database-url), else a voxgate_bench database found or started as 'voxgate dev'
does. docs/capacity.md explains each figure.`

// benchPlan is the plan the bench's users are on: every limit is checked
// (the work exact limits cost is what is measured), none is reached.
const benchPlan = `quota:
  plans:
    loadbench:
      requests_per_minute: 100000000
      requests_per_hour: 100000000
      requests_per_day: 100000000
      tokens_per_day: 100000000000
      cost_per_day_micros: 100000000000
      calls_per_day: 100000000
      concurrent_turns: 1000
      voice_seconds_per_month: 100000000000
`

func runBench(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", benchSummary, stderr)
	dbURL := fs.String("database-url", "", "the database (default $VOXGATE_DATABASE_URL, else a local voxgate_bench)")
	clients := fs.String("clients", "1,32", "concurrent clients, one run each (comma-separated)")
	modes := fs.String("mode", "whole,stream", "whole, stream, chat or voice: completions whole or streamed, streamed chat turns, or voice sessions started and ended (comma-separated)")
	duration := fs.Duration("duration", 5*time.Second, "length of each measured run")
	warmup := fs.Duration("warmup", time.Second, "an unmeasured run before each gateway run")
	rounds := fs.Int("rounds", 1, "how many times to repeat the whole set, interleaved")
	cores := fs.String("pg-cores", "2,4,8,16", "PostgreSQL core counts to estimate capacity for")
	profile := fs.String("cpuprofile", "", "write the gateway's CPU profile over the whole bench to this file (go tool pprof reads it)")
	binary := fs.String("gateway", "", "the voxgate binary to measure (default this one): compare two builds on one machine")
	responses := fs.Bool("responses", true, "with each streamed case, time a streamed POST /v1/responses to its first response.output_text.delta, through the gateway and straight to a mock of that route")
	traces := fs.Bool("traces", false, "have the gateway export every request's trace (100 % sampled) to an OTLP sink in this process: what tracing costs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	counts, err := intList(*clients)
	if err != nil {
		return fmt.Errorf("--clients: %w", err)
	}
	pgCores, err := intList(*cores)
	if err != nil {
		return fmt.Errorf("--pg-cores: %w", err)
	}
	var cases []string
	for _, m := range strings.Split(*modes, ",") {
		switch m = strings.TrimSpace(m); m {
		case modeWhole, modeStream, modeChat, modeVoice:
			cases = append(cases, m)
		default:
			return fmt.Errorf("--mode: %q is not whole, stream, chat or voice", m)
		}
	}
	if *dbURL == "" {
		if *dbURL, err = devDatabaseURL(ctx, getenv, stderr, "voxgate_bench"); err != nil {
			return err
		}
	}

	mock, err := capacity.StartMock()
	if err != nil {
		return err
	}
	defer mock.Close()
	var otel []string
	if *traces {
		sink, err := capacity.StartTraceSink()
		if err != nil {
			return err
		}
		defer sink.Close()
		defer func() {
			fmt.Fprintf(stdout, "traces: %d OTLP exports received, %d bytes\n", sink.Exports(), sink.Bytes())
		}()
		otel = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL, "OTEL_TRACES_SAMPLER=always_on"}
	}
	gw, err := startBenchGateway(ctx, *binary, *dbURL, mock.URL, *profile, slices.Max(counts), stderr, otel...)
	if err != nil {
		return err
	}
	defer gw.stop()
	pool, err := pgxpool.New(ctx, withAppName(*dbURL, "voxgate-bench"))
	if err != nil {
		return err
	}
	defer pool.Close()
	pg, err := capacity.NewBackends(ctx, pool, "voxgate")
	if err != nil {
		return err
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0}}
	direct := capacity.Target{URL: mock.URL + "/chat/completions"}
	via := capacity.Target{URL: gw.url + "/v1/chat/completions", Auth: gw.auth}
	var respDirect capacity.Target
	respVia := capacity.Target{URL: gw.url + "/v1/responses", Auth: gw.auth}
	if *responses {
		rm, err := startRespMock()
		if err != nil {
			return err
		}
		defer rm.Close()
		respDirect.URL = rm.URL + "/responses"
	}
	fmt.Fprintf(stdout, "voxgate bench: gateway pid %d at %s, mock at %s, %s per run\n\n", gw.cmd.Process.Pid, gw.url, mock.URL, *duration)
	var rows []benchRow
	chatVia := capacity.Target{URL: gw.url + "/v1/chat", Auth: gw.auth}
	for round := range *rounds {
		for _, mode := range cases {
			for _, n := range counts {
				l := capacity.Load{Clients: n, Duration: *duration, Stream: mode != modeWhole, Model: "default"}
				gateway := func(l capacity.Load) capacity.Result { return capacity.Run(ctx, client, via, l) }
				baseline := func(l capacity.Load) capacity.Result { return capacity.Run(ctx, client, direct, l) }
				switch mode {
				case modeChat:
					gateway = func(l capacity.Load) capacity.Result { return runChat(ctx, client, chatVia, l) }
				case modeVoice:
					gateway = func(l capacity.Load) capacity.Result { return runVoice(ctx, client, gw.url, gw.auth, l) }
					baseline = func(l capacity.Load) capacity.Result { return runMint(ctx, client, mock.URL, l) }
				}
				row, err := benchCase(ctx, baseline, gateway, l, *warmup, gw, pg, client)
				if err != nil {
					return err
				}
				row.mode = mode
				if mode == modeStream && *responses {
					row.resp = benchResponses(ctx, client, respDirect, respVia, l, *warmup)
				}
				row.round = round + 1
				rows = append(rows, row)
				printBenchRow(stdout, row)
			}
		}
	}
	printCapacity(stdout, rows, pgCores)
	return benchFailures(rows)
}

// benchFailures is an error when any request through the gateway failed:
// a figure from a run whose requests failed measures the failures, so the
// bench exits non-zero (scripts/bench-smoke.sh relies on it).
func benchFailures(rows []benchRow) error {
	failed, first := 0, ""
	for _, r := range rows {
		for _, res := range []capacity.Result{r.gateway, r.respGateway()} {
			if res.Failed > 0 && first == "" {
				first = res.FirstError
			}
			failed += res.Failed
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d requests through the gateway failed (first: %s)", failed, first)
	}
	return nil
}

// The bench's modes: completions whole or streamed, streamed chat turns,
// or voice sessions (benchvoice.go).
const (
	modeWhole  = "whole"
	modeStream = "stream"
	modeChat   = "chat"
	modeVoice  = "voice"
)

// benchCase runs l against the mock directly with baseline, then (after a
// warm-up) through the gateway with gateway, and reads the gateway's and
// PostgreSQL's CPU around the gateway's run.
func benchCase(ctx context.Context, baseline, gateway func(capacity.Load) capacity.Result,
	l capacity.Load, warmup time.Duration, gw *benchGateway, pg *capacity.Backends, client *http.Client) (benchRow, error) {
	row := benchRow{load: l}
	row.direct = baseline(l)
	w := l
	w.Duration = warmup
	gateway(w)
	before, err := pg.Settled(ctx)
	if err != nil {
		return row, err
	}
	sent0, err := capacity.Counters(ctx, client, gw.url+"/metrics", sentCounters...)
	if err != nil {
		return row, err
	}
	cpu0, err := capacity.ProcessCPU(gw.cmd.Process.Pid)
	if err != nil {
		return row, err
	}
	row.gateway = gateway(l)
	cpu1, err := capacity.ProcessCPU(gw.cmd.Process.Pid)
	if err != nil {
		return row, err
	}
	sent1, err := capacity.Counters(ctx, client, gw.url+"/metrics", sentCounters...)
	if err != nil {
		return row, err
	}
	_, row.counted = sent1[sentCounters[0]] // a build before the counters has none
	row.statements = sent1[sentCounters[0]] - sent0[sentCounters[0]]
	row.roundTrips = sent1[sentCounters[1]] - sent0[sentCounters[1]]
	after, err := pg.Settled(ctx)
	if err != nil {
		return row, err
	}
	row.gatewayCPU = cpu1 - cpu0
	row.pg = after.Since(before)
	if ctx.Err() != nil {
		return row, ctx.Err()
	}
	return row, nil
}

// sentCounters are the gateway's counts of what it sent PostgreSQL.
var sentCounters = []string{"voxgate_db_statements_total", "voxgate_db_round_trips_total"}

// benchGateway is the gateway under load: 'voxgate serve' in a child
// process, so its CPU is its own.
type benchGateway struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	url    string
	dir    string
	// tokens are the clients' bearer tokens: each client is a user of its
	// own, and keeps its token as an app does.
	tokens []string
}

// auth is client c's Authorization header.
func (g *benchGateway) auth(c int) string { return g.tokens[c] }

func startBenchGateway(ctx context.Context, binary, dbURL, mockURL, profile string, clients int, stderr io.Writer, otel ...string) (*benchGateway, error) {
	if binary == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		binary = self
	}
	dir, err := os.MkdirTemp("", "voxgate-bench-")
	if err != nil {
		return nil, err
	}
	g := &benchGateway{dir: dir, exited: make(chan struct{})}
	raw, run := make([]byte, 32), make([]byte, 4)
	_, _ = rand.Read(raw)
	_, _ = rand.Read(run)
	secret := hex.EncodeToString(raw) // the gateway takes the secret's text as its bytes
	for c := range clients {
		tok, err := auth.Mint(auth.MintParams{Secret: []byte(secret), Subject: fmt.Sprintf("bench-%s-%d", hex.EncodeToString(run), c),
			Plan: "loadbench", TTL: 24 * time.Hour})
		if err != nil {
			return nil, err
		}
		g.tokens = append(g.tokens, "Bearer "+tok)
	}
	cfgPath := filepath.Join(dir, "voxgate.yaml")
	cfg := benchPlan + "database:\n  spool_dir: " + strconv.Quote(filepath.Join(dir, "spool")) + "\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	g.url = "http://" + addr
	g.cmd = exec.Command(binary, "serve", "--config", cfgPath)
	g.cmd.Env = append(benchEnv(os.Environ()),
		"VOXGATE_DATABASE_URL="+dbURL, "VOXGATE_JWT_SECRET="+secret, "VOXGATE_ADDR="+addr,
		"VOXGATE_LOG_LEVEL=warn", "OPENAI_BASE_URL="+mockURL, "OPENAI_API_KEY=sk-bench")
	g.cmd.Env = append(g.cmd.Env, otel...)
	if profile != "" {
		abs, err := filepath.Abs(profile)
		if err != nil {
			return nil, err
		}
		g.cmd.Env = append(g.cmd.Env, "VOXGATE_CPU_PROFILE="+abs)
	}
	g.cmd.Stdout, g.cmd.Stderr = stderr, stderr
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = g.cmd.Wait(); close(g.exited) }()
	if err := g.ready(ctx); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

// ready waits for the gateway's /readyz, at most a minute (a first start
// migrates the database).
func (g *benchGateway) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.url+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-g.exited:
			return fmt.Errorf("the gateway exited before it was ready: %v", g.cmd.ProcessState)
		case <-ctx.Done():
			return errors.New("the gateway was not ready within a minute")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop drains the gateway as SIGTERM does, and removes its files.
func (g *benchGateway) stop() {
	_ = g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.exited:
	case <-time.After(30 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.exited
	}
	_ = os.RemoveAll(g.dir)
}

// benchEnv is the bench's environment without the variables that would
// point the gateway elsewhere than the bench sets.
func benchEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "VOXGATE_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") ||
			strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "GOOGLE_") || strings.HasPrefix(k, "OTEL_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// withAppName sets application_name on a PostgreSQL URL or DSN, so the
// bench's own connection is told apart from the gateway's.
func withAppName(dbURL, name string) string {
	if strings.Contains(dbURL, "://") {
		sep := "?"
		if strings.Contains(dbURL, "?") {
			sep = "&"
		}
		return dbURL + sep + "application_name=" + name
	}
	return dbURL + " application_name=" + name
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}
