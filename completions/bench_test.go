package completions_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/completions"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/internal/server"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// completionRoutes serves POST /v1/chat/completions behind the server's
// middleware and JWT auth, as cmd/voxgate mounts it. Callers sign in with
// testgraph.Token.
func completionRoutes(t testing.TB, pool *pgxpool.Pool, svc *completions.Service) *server.Server {
	t.Helper()
	srv := testgraph.Server(t, pool)
	srv.Mount([]server.Route{{Pattern: "POST /v1/chat/completions", Handler: srv.AI(svc.HandleCompletions), Stream: true}})
	return srv
}

func benchPlan(q *config.Quota) { q.Plans["bench"] = config.BenchPlan() }

// completionBody is a streamed request for model with usage.
func completionBody(model string, n int) string {
	return fmt.Sprintf(`{"model":%q,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello %d"}]}`, model, n)
}

// firstByte posts a streamed completion and returns the time to the first
// byte of its answer: the first data line with content (a role-only first
// chunk is not the answer). The rest is read to [DONE].
func firstByte(client *http.Client, url, auth, body string) (time.Duration, error) {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+auth)
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var took time.Duration
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if took == 0 && strings.HasPrefix(line, "data: ") && strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			took = time.Since(began)
		}
		done = done || line == "data: [DONE]"
	}
	if took == 0 || !done {
		return 0, fmt.Errorf("%s: status %d: no content or no [DONE] (read: %v)", url, resp.StatusCode, sc.Err())
	}
	return took, nil
}

// bareReverseProxy serves httputil.ReverseProxy in front of the simulator
// at simURL, flushing every write and signing in with the simulator's
// key: the least a Go gateway does. It returns the proxy's URL. Its
// transport keeps as many idle connections as the clients need, as the
// gateway's does: http.DefaultTransport keeps two a host, so 32 clients
// would dial and close a connection for most requests, which is neither a
// fair baseline for CPU nor a quiet one (a CI run once saw such a proxy's
// upstream read fail with "use of closed network connection").
func bareReverseProxy(b *testing.B, simURL string) string {
	target, _ := url.Parse(simURL)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 256
	b.Cleanup(transport.CloseIdleConnections)
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header.Set("Authorization", "Bearer "+simtest.TestKey)
		},
		FlushInterval: -1,
	})
	b.Cleanup(proxy.Close)
	return proxy.URL
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCompletionsFirstByte: POST /v1/chat/completions, streaming, 32
// concurrent clients, against the simulator: one-target routes, the bench
// plan, the production pool size, behind the server's middleware and JWT
// auth.
//   - ttfb: the simulator answers like a fast real model (50 ms to the
//     first token, then 200 tokens a second, 100 tokens), so 32 clients
//     are 32 answers in flight rather than 32 loops racing for the CPU.
//     Each client sends a request through voxgate, then the same one
//     straight to the simulator, then through a bare reverse proxy, in
//     turn: the time to the answer's first byte of each, and what voxgate
//     adds (auth, admission, routing; the ledger is written after the last
//     content, before [DONE]) beside what the proxy's hop alone adds.
//   - throughput: a second simulator with no latency, so the clients are
//     as fast as the machine: the same requests through a bare
//     httputil.ReverseProxy and through voxgate, in alternating phases of
//     equal size; requests a second and CPU per request of this whole
//     process (clients and simulator included, the same in both phases;
//     PostgreSQL is another process), and their ratios.
func BenchmarkCompletionsFirstByte(b *testing.B) {
	const clients = 32
	realistic := sim.Config{Latency: &sim.Latency{TTFT: 50 * time.Millisecond, TokensPerSecond: 200, ChunkTokens: 1},
		Script: sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"hello"}}, Reply: sim.Reply{Text: "Hello there. ", TextTokens: 100}}}}}
	fast := realistic
	fast.Latency = simtest.ZeroLatency()
	_, fastSim := simtest.NewServer(b, fast)
	fastProvider, err := openai.New(openai.Params{BaseURL: fastSim.URL + "/v1", APIKey: simtest.TestKey})
	if err != nil {
		b.Fatal(err)
	}
	f := newFixture(b, options{plans: benchPlan, simCfg: &realistic, poolSize: 20,
		provider: func(p llm.Provider) llm.Provider {
			r, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"sim": p, "fast": fastProvider},
				Routes: []llm.Route{{Name: "bench", Targets: []llm.Target{{Provider: "sim", Model: fallbackModel}}},
					{Name: "fast", Targets: []llm.Target{{Provider: "fast", Model: fallbackModel}}}}})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}})
	gw := httptest.NewUnstartedServer(completionRoutes(b, f.pool, f.svc))
	gw.Config.Protocols = testkit.BothProtocols()
	gw.Start()
	b.Cleanup(gw.Close)
	proxy, slowProxy := bareReverseProxy(b, fastSim.URL), bareReverseProxy(b, f.simURL)
	tokens := make([]string, 64)
	for u := range tokens {
		tokens[u] = testgraph.Token(b, fmt.Sprintf("compl-bench-%d", u), "bench")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * clients}}
	b.Cleanup(client.CloseIdleConnections)
	viaGateway := func(i int) (time.Duration, error) {
		return firstByte(client, gw.URL, tokens[i%len(tokens)], completionBody("bench", i))
	}
	direct := func(i int) (time.Duration, error) {
		return firstByte(client, f.simURL, simtest.TestKey, completionBody(fallbackModel, i))
	}
	fastGateway := func(i int) (time.Duration, error) {
		return firstByte(client, gw.URL, tokens[i%len(tokens)], completionBody("fast", i))
	}
	viaProxy := func(i int) (time.Duration, error) {
		return firstByte(client, proxy, simtest.TestKey, completionBody(fallbackModel, i))
	}
	viaSlowProxy := func(i int) (time.Duration, error) {
		return firstByte(client, slowProxy, simtest.TestKey, completionBody(fallbackModel, i))
	}
	// run sends n requests from the clients, each through every one of
	// sends in turn, and returns each send's times in request order.
	run := func(n int, sends ...func(int) (time.Duration, error)) [][]time.Duration {
		out := make([][]time.Duration, len(sends))
		for s := range out {
			out[s] = make([]time.Duration, n)
		}
		next := make(chan int, n)
		for i := range n {
			next <- i
		}
		close(next)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for i := range next {
					for s, send := range sends {
						took, err := send(i)
						if err != nil {
							b.Error(err)
							return
						}
						out[s][i] = took
					}
				}
			})
		}
		wg.Wait()
		return out
	}
	// One untimed round dials every connection and creates the users'
	// quota rows, as steady traffic has.
	run(2*clients, viaGateway, direct, viaSlowProxy, fastGateway, viaProxy)

	b.Run("ttfb", func(b *testing.B) {
		n := max(b.N, 4*clients)
		b.ResetTimer()
		got := run(n, viaGateway, direct, viaSlowProxy)
		b.StopTimer()
		g, d, px := got[0], got[1], got[2]
		slices.Sort(g)
		slices.Sort(d)
		slices.Sort(px)
		for _, p := range []struct {
			name string
			q    float64
		}{{"p50", .5}, {"p99", .99}} {
			b.ReportMetric(latency.Millis(b, d, p.q), "direct-"+p.name+"-ms")
			b.ReportMetric(latency.Millis(b, g, p.q), "gw-"+p.name+"-ms")
			b.ReportMetric(latency.Millis(b, g, p.q)-latency.Millis(b, d, p.q), "added-"+p.name+"-ms")
			b.ReportMetric(latency.Millis(b, px, p.q)-latency.Millis(b, d, p.q), "proxy-added-"+p.name+"-ms")
		}
	})
	b.Run("throughput", func(b *testing.B) {
		q := max(b.N/4, clients)       // requests per phase
		var wall, cpu [2]time.Duration // [proxy, gateway]
		b.ResetTimer()
		for round := range 4 {
			k := round % 2
			send := []func(int) (time.Duration, error){viaProxy, fastGateway}[k]
			began, c0 := time.Now(), cpuTime()
			run(q, send)
			wall[k] += time.Since(began)
			cpu[k] += cpuTime() - c0
		}
		b.StopTimer()
		per := float64(2 * q)
		rps := func(k int) float64 { return per / wall[k].Seconds() }
		cpuPer := func(k int) float64 { return float64(cpu[k].Microseconds()) / per }
		b.ReportMetric(rps(0), "proxy-req/s")
		b.ReportMetric(rps(1), "gw-req/s")
		b.ReportMetric(rps(1)/rps(0), "gw/proxy-rps")
		b.ReportMetric(cpuPer(0), "proxy-cpu-µs/req")
		b.ReportMetric(cpuPer(1), "gw-cpu-µs/req")
		b.ReportMetric(cpuPer(1)/cpuPer(0), "gw/proxy-cpu")
	})
}
