package chat_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/chat"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/internal/server"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

func benchPlan(q *config.Quota) { q.Plans["bench"] = config.BenchPlan() }

// productionRoutes serves POST /v1/chat behind the server's middleware
// (request ids, metrics, panics, CORS, body limits) and JWT auth, as
// cmd/voxgate mounts it: what a held stream costs depends on how deep its
// handler runs. Callers sign in with testgraph.Token.
func productionRoutes(t testing.TB, pool *pgxpool.Pool, svc *chat.Service) http.Handler {
	t.Helper()
	srv := testgraph.Server(t, pool)
	srv.Mount([]server.Route{{Pattern: "POST /v1/chat", Handler: srv.AI(svc.HandleChat), Stream: true}})
	return srv
}

// firstContent posts a streamed turn as the n-th of tokens' users and
// returns the time to its first content event; the rest of the stream is
// read to its end.
func firstContent(url string, tokens []string, n int) (time.Duration, error) {
	body := fmt.Sprintf(`{"message":"hello %d"}`, n)
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tokens[n%len(tokens)])
	began := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var took time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if took == 0 && sc.Text() == "event: content" {
			took = time.Since(began)
		}
	}
	if took == 0 {
		return 0, fmt.Errorf("no content (status %d)", resp.StatusCode)
	}
	return took, nil
}

// directFirstChunk streams the same answer straight from the simulator
// with openai-go and returns the time to its first content chunk.
func directFirstChunk(client openai.Client, n int) (time.Duration, error) {
	began := time.Now()
	s := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         config.DefaultChat().Model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("hello %d", n))},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	defer s.Close()
	var took time.Duration
	for s.Next() {
		if c := s.Current(); took == 0 && len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			took = time.Since(began)
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return took, nil
}

// BenchmarkTimeToFirstContent: the gateway's overhead on a streamed turn
// without tools — the time to the first content event through voxgate
// beside the time to the first content chunk straight from the simulator,
// interleaved in one run, at 1 and 50 concurrent streams, bench plan, the
// production pool size, the chat route behind the server's middleware and
// JWT auth. The model answers like a fast real one (50 ms to the first
// token, then 200 tokens a second, 100 tokens), so 50 streams are 50 turns
// in flight rather than 50 loops racing for the CPU.
//
// Each stream starts its next turn as soon as its last one ends, and every
// turn takes as long, so how the streams' first turns start decides how
// all their turns arrive:
//   - arrivals=spread: each stream starts at a random moment within one
//     turn's length, as independent users' turns arrive;
//   - arrivals=together: all at once, and their turns keep arriving in
//     waves of 50 at the same instant, which the gateway admits as a
//     batch (quota/batch.go): the worst case, measured beside.
func BenchmarkTimeToFirstContent(b *testing.B) {
	cfg := sim.Config{Latency: &sim.Latency{TTFT: 50 * time.Millisecond, TokensPerSecond: 200, ChunkTokens: 1},
		Script: sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"hello"}}, Reply: sim.Reply{Text: "Hello there. ", TextTokens: 100}}}}}
	f := newFixture(b, options{plans: benchPlan, simCfg: &cfg, poolSize: 20, production: true,
		noContextTool: true})
	client := simtest.Client(f.simURL)
	tokens := make([]string, 64)
	for u := range tokens {
		tokens[u] = testgraph.Token(b, fmt.Sprintf("bench-%d", u), "bench")
	}
	for _, c := range []struct {
		streams int
		spread  bool
	}{{1, true}, {50, true}, {50, false}} {
		name := fmt.Sprintf("streams=%d", c.streams)
		if c.streams > 1 {
			name += map[bool]string{true: "/arrivals=spread", false: "/arrivals=together"}[c.spread]
		}
		b.Run(name, func(b *testing.B) {
			streams := c.streams
			// A round of every stream first, untimed: the first turns dial
			// the database pool's and the provider's connections and create
			// the users' quota rows, which steady traffic has done already.
			// It also times one turn, gateway and direct, under this load.
			var wg sync.WaitGroup
			warm := time.Now()
			for i := range streams {
				wg.Go(func() {
					if _, err := firstContent(f.url, tokens, i); err != nil {
						b.Error(err)
					}
					if _, err := directFirstChunk(client, i); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			turn := time.Since(warm)
			n := max(b.N, 2*streams)
			gw, direct := make([]time.Duration, n), make([]time.Duration, n)
			next := make(chan int, n)
			for i := range n {
				next <- i
			}
			close(next)
			b.ResetTimer()
			for range streams {
				wg.Go(func() {
					if c.spread && streams > 1 {
						// measurement window: the streams' starts are spread
						// over a turn, the arrival pattern being measured.
						time.Sleep(rand.N(turn))
					}
					for i := range next {
						var err error
						if gw[i], err = firstContent(f.url, tokens, i); err != nil {
							b.Error(err)
							return
						}
						if direct[i], err = directFirstChunk(client, i); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(gw)
			slices.Sort(direct)
			for _, p := range []struct {
				name string
				q    float64
			}{{"p50", .5}, {"p90", .9}, {"p99", .99}} {
				b.ReportMetric(latency.Millis(b, direct, p.q), "direct-"+p.name+"-ms")
				b.ReportMetric(latency.Millis(b, gw, p.q), "gw-"+p.name+"-ms")
				b.ReportMetric(latency.Millis(b, gw, p.q)-latency.Millis(b, direct, p.q), "added-"+p.name+"-ms")
			}
		})
	}
}

// BenchmarkIdleStreams holds 2,000 streams open while the model has not
// answered and reports the memory each costs the gateway: the heap and
// stacks of this process, which serves the gateway and the simulator,
// while the apps' clients run in a child process (idleclient_test.go).
// The simulator is served over TLS with HTTP/2, as the real API is, so the
// gateway's provider calls share connections as they do in production.
// Two baselines from the same run:
//   - sim: the same streams straight to the simulator; this process holds
//     the simulator alone, and its share is subtracted from the others;
//   - proxy: a bare Go reverse proxy in the gateway's place, which reads
//     the request, makes the same provider call through the same transport
//     and waits: the least any net/http gateway holds per stream.
//
// The gateway's chat route is served behind the server's middleware and
// JWT auth, as in production (productionRoutes). The app's leg to the gateway or proxy is HTTP/1.1 (a connection per
// stream) or HTTP/2 without TLS (what a load balancer speaking HTTP/2 to
// its backends sends).
func BenchmarkIdleStreams(b *testing.B) {
	const streams = 2000
	cfg := sim.Config{Latency: &sim.Latency{TTFT: time.Hour}, Script: script()}
	body := gatewayRequest(b)
	for _, app := range []string{"http1", "http2"} {
		b.Run("app="+app, func(b *testing.B) {
			h2 := app == "http2"
			for range b.N {
				alone := holdStreams(b, cfg, streams, "sim", body, true)
				proxy := holdStreams(b, cfg, streams, "proxy", body, h2)
				gateway := holdStreams(b, cfg, streams, "gateway", nil, h2)
				b.ReportMetric(alone/1024, "sim-KiB/stream")
				b.ReportMetric((proxy-alone)/1024, "proxy-KiB/stream")
				b.ReportMetric((gateway-alone)/1024, "gw-KiB/stream")
				b.ReportMetric((gateway-alone)/(proxy-alone), "gw/proxy")
			}
		})
	}
}

// gatewayRequest is the Chat Completions body the gateway sends for the
// benchmark's turn (instructions, the message, the plan's tools), which
// the sim stage's client and the bare proxy send too: the simulator's
// share of a stream grows with what it decodes, and it should be the same
// in every stage.
func gatewayRequest(b *testing.B) []byte {
	bodies := make(chan []byte, chat.MaxIterations)
	f := newFixture(b, options{plans: benchPlan, capture: bodies, noContextTool: true})
	if r := f.post(b, call{user: "capture", plan: "bench", body: map[string]any{"message": "hello"}}); r.Status != http.StatusOK {
		b.Fatalf("capture turn: status %d", r.Status)
	}
	return <-bodies
}

// holdStreams opens n streams from a child process that wait on the model:
// to the simulator directly ("sim") or through a proxy or a gateway (over
// HTTP/2 without TLS when h2 is set). It returns the memory per stream
// this process holds.
func holdStreams(b *testing.B, cfg sim.Config, n int, via string, body []byte, h2 bool) float64 {
	b.Helper()
	var f *fixture
	var client idleClientConfig
	switch via {
	case "sim":
		s, ts := simtest.NewTLSServer(b, cfg)
		f = &fixture{sim: s, simURL: ts.URL}
		client = idleClientConfig{URL: ts.URL + "/v1/chat/completions", Body: body, CA: ts.Certificate().Raw,
			Headers: []map[string]string{{"Authorization": "Bearer " + simtest.TestKey}}}
	case "proxy":
		s, ts := simtest.NewTLSServer(b, cfg)
		f = &fixture{sim: s, simURL: ts.URL, url: bareProxy(b, ts, body)}
		client = idleClientConfig{URL: f.url + "/v1/chat", Body: []byte(`{"message":"hello"}`), H2: h2}
	default:
		// Through the server's own middleware and JWT auth, as in
		// production: the handler's depth decides its stack.
		f = newFixture(b, options{plans: benchPlan, simCfg: &cfg, tls: true, production: true,
			noContextTool: true, idle: true})
		client = idleClientConfig{URL: f.url + "/v1/chat", Body: []byte(`{"message":"hello"}`), H2: h2}
		for u := range 100 {
			tok := testgraph.Token(b, fmt.Sprintf("idle-%d", u), "bench")
			client.Headers = append(client.Headers, map[string]string{"Authorization": "Bearer " + tok})
		}
	}
	before := memInUse()
	c := startIdleClient(b, client)
	// One stream at a time, each reaching the model before the next opens:
	// streams that open all at once find no HTTP/2 connection with room and
	// each dial one, so the count of connections (and the memory) would be
	// a race; arriving one by one, they fill each connection to the
	// server's limit before the next is dialled, as spread-out traffic does.
	for i := range n {
		if err := c.open(); err != nil {
			b.Fatalf("idle client: %v", err)
		}
		waitStreams(b, f, i+1)
	}
	per := float64(memInUse()-before) / float64(n)
	if err := c.close(); err != nil {
		b.Fatal(err)
	}
	return per
}

// bareProxy serves a minimal reverse proxy in front of the TLS simulator:
// it reads the request, opens the stream headers, posts body as the
// completion through llm.NewTransport and copies what comes back.
func bareProxy(b *testing.B, sim *httptest.Server, body []byte) string {
	tr := llm.NewTransport()
	tr.TLSClientConfig = sim.Client().Transport.(*http.Transport).TLSClientConfig
	client := &http.Client{Transport: tr}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, sim.URL+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(w, resp.Body)
	}))
	ts.Config.Protocols = testkit.BothProtocols()
	ts.Start()
	b.Cleanup(ts.Close)
	b.Cleanup(tr.CloseIdleConnections)
	return ts.URL
}

// waitStreams waits until n turns are waiting on the model. It polls the
// simulator's count, which signals nothing, every 100 µs rather than at
// testkit.Poll's 5 ms: the benchmark opens its 2,000 streams one after
// another and waits here after each, so the poll's period is multiplied
// by 2,000 before the measurement window opens (at 5 ms the opening
// outlasted the adapter's wait on a loaded machine).
func waitStreams(b *testing.B, f *fixture, n int) {
	deadline := time.Now().Add(time.Minute)
	for chatStats(f.sim).InFlight < int64(n) {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d streams reached the model (the idle client's errors, if any, are above)", chatStats(f.sim).InFlight, n)
		}
		time.Sleep(100 * time.Microsecond) // a poll at the period the doc above explains, not a guessed wait
	}
}

// memInUse is the heap and stacks in use once garbage is gone. Two
// collections: sync.Pool keeps what it held through the first (net/http
// pools its connections' buffers), which would otherwise count a closed
// stream's buffers as in use before the streams measured open.
func memInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
