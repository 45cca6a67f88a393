package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// Benchmarks run the load generator in-process against a loopback server,
// as voxgate's own benchmarks will. On a 2-core machine the generator and
// the server share the CPU, so each figure sits beside a baseline measured
// in the same run: the same load against a handler that returns a canned
// body of the same size.
//
//	go test ./sim -run '^$' -bench . -benchtime 5s

const benchBody = `{"model":"gpt-4o","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"find me a pasta recipe"}]}`

func BenchmarkChatCompletions(b *testing.B) {
	s, err := sim.New(sim.Config{Latency: simtest.ZeroLatency()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// The canned answer is what the simulator returns for benchBody.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(benchBody))
	req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
	s.ServeHTTP(rec, req)
	canned := rec.Body.Bytes()
	baseline := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(canned)
	})
	b.Run("baseline", func(b *testing.B) { loadTest(b, baseline) })
	b.Run("sim", func(b *testing.B) { loadTest(b, s) })
}

// loadTest sends benchBody as fast as parallel clients can over keep-alive
// loopback connections and reports completions per second.
func loadTest(b *testing.B, h http.Handler) {
	ts := httptest.NewServer(h)
	defer ts.Close()
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := ts.URL + "/v1/chat/completions"
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(benchBody))
			req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkConcurrentStreams holds streams open concurrently (each streams
// 40 tokens at 20 tokens/s, about two seconds) and reports the memory the
// simulator and its clients (heap and goroutine stacks) use per open stream. One op is one full batch.
func BenchmarkConcurrentStreams(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run("streams="+strconv.Itoa(n), func(b *testing.B) { streamBatch(b, n) })
	}
}

func streamBatch(b *testing.B, n int) {
	s, err := sim.New(sim.Config{
		Latency: &sim.Latency{TokensPerSecond: 20},
		Script:  sim.Script{Rules: []sim.Rule{{Reply: sim.Reply{TextTokens: 40}}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s)
	defer ts.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	body := `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`

	var memPerStream float64
	b.ResetTimer()
	for range b.N {
		before := memInUse()
		var opened, wg sync.WaitGroup
		opened.Add(n)
		wg.Add(n)
		errs := make(chan error, n)
		for range n {
			go func() {
				defer wg.Done()
				errs <- readStream(b.Context(), client, ts.URL, body, opened.Done)
			}()
		}
		opened.Wait()
		if got := s.Stats().Endpoints[sim.EndpointChatCompletions].InFlight; got != int64(n) {
			b.Errorf("in flight with every stream open: got %d, want %d", got, n)
		}
		memPerStream = float64(memInUse()-before) / float64(n)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(memPerStream/1024, "KiB/stream")
	b.ReportMetric(float64(n), "streams")
}

// readStream opens a stream, calls opened after the first event, and reads
// to data: [DONE].
func readStream(ctx context.Context, client *http.Client, base, body string, opened func()) error {
	once := sync.OnceFunc(opened)
	defer once()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		once()
		if bytes.Equal(sc.Bytes(), []byte("data: [DONE]")) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// memInUse is heap plus goroutine stacks: each open stream costs a server
// and a client goroutine, whose stacks are not heap.
func memInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
