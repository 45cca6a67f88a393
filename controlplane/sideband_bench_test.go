package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// fakeCalls is a bare Realtime provider for the sideband benchmarks: calls
// are placed without media, each sideband socket is kept, and every
// function_call_output the gateway sends is timed against the function
// call that asked for it. It costs next to nothing, so the figures are the
// gateway's.
type fakeCalls struct {
	sim     *sim.Server // mints the client secrets of direct sessions
	n       atomic.Int64
	mu      sync.Mutex
	socks   map[string]*fakeSock
	sent    sync.Map // call_id → time the function call went out
	answers chan time.Duration
	outputs map[string]int // function_call_output items by call_id, under mu
	creates int            // response.create events, under mu
}

type fakeSock struct {
	wmu  sync.Mutex
	conn *websocket.Conn
}

func newFakeCalls(t testing.TB) (*fakeCalls, string) {
	s, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCalls{sim: s, socks: map[string]*fakeSock{}, answers: make(chan time.Duration, 1<<16), outputs: map[string]int{}}
	up := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.Handle("POST "+sim.EndpointRealtimeClientSecrets, s)
	mux.HandleFunc("POST /v1/realtime/calls", func(w http.ResponseWriter, _ *http.Request) {
		id := fmt.Sprintf("rtc_bench%08d", f.n.Add(1))
		w.Header().Set("Location", "/v1/realtime/calls/"+id)
		w.Header().Set("Content-Type", "application/sdp")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("v=0\r\n"))
	})
	mux.HandleFunc("POST /v1/realtime/calls/{id}/hangup", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		s := f.socks[r.PathValue("id")]
		f.mu.Unlock()
		if s != nil {
			s.wmu.Lock()
			_ = s.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""))
			s.wmu.Unlock()
		}
	})
	mux.HandleFunc("GET /v1/realtime", func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.socks[r.URL.Query().Get("call_id")] = &fakeSock{conn: conn}
		f.mu.Unlock()
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var ev struct {
				Type string `json:"type"`
				Item struct {
					CallID string `json:"call_id"`
				} `json:"item"`
			}
			if json.Unmarshal(data, &ev) != nil {
				continue
			}
			switch ev.Type {
			case "conversation.item.create":
				if at, ok := f.sent.LoadAndDelete(ev.Item.CallID); ok {
					f.answers <- time.Since(at.(time.Time))
				}
				f.mu.Lock()
				f.outputs[ev.Item.CallID]++
				f.mu.Unlock()
			case "response.create":
				f.mu.Lock()
				f.creates++
				f.mu.Unlock()
			}
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return f, ts.URL
}

// send writes a raw server event on the call's socket.
func (f *fakeCalls) send(callID string, ev []byte) {
	f.mu.Lock()
	s := f.socks[callID]
	f.mu.Unlock()
	s.wmu.Lock()
	_ = s.conn.WriteMessage(websocket.TextMessage, ev)
	s.wmu.Unlock()
}

// callTool sends a response with one function call on the call's socket,
// as the API ends one: the arguments, the completed item, response.done.
func (f *fakeCalls) callTool(callID, id string) {
	f.mu.Lock()
	s := f.socks[callID]
	f.mu.Unlock()
	resp := "resp_" + id
	args, _ := json.Marshal(map[string]any{"type": "response.function_call_arguments.done", "call_id": id, "name": "echo",
		"arguments": `{"q":"x"}`, "event_id": "e", "item_id": "i", "output_index": 0, "response_id": resp})
	item, _ := json.Marshal(map[string]any{"type": "response.output_item.done", "event_id": "e", "output_index": 0, "response_id": resp,
		"item": map[string]any{"type": "function_call", "status": "completed", "call_id": id, "name": "echo", "arguments": `{"q":"x"}`}})
	done, _ := json.Marshal(map[string]any{"type": "response.done", "event_id": "e", "response": map[string]any{"id": resp, "status": "completed"}})
	f.sent.Store(id, time.Now())
	s.wmu.Lock()
	for _, ev := range [][]byte{args, item, done} {
		_ = s.conn.WriteMessage(websocket.TextMessage, ev)
	}
	s.wmu.Unlock()
}

// heldCall is a benchmark's sideband session and its call.
type heldCall struct {
	callID, sessionID string
	p                 auth.Principal
}

// holdSessions starts n sideband sessions on f's gateway and places their
// calls, and waits until each is held.
func holdSessions(b *testing.B, f fixture, fake *fakeCalls, n int) []heldCall {
	b.Helper()
	return placeHeld(b, f, n, "sideband", func() string { return fmt.Sprintf("rtc_bench%08d", fake.n.Load()) },
		func() int { fake.mu.Lock(); defer fake.mu.Unlock(); return len(fake.socks) })
}

// placeHeld starts n sessions of mode on f's gateway and places them with
// a stand-in provider, which names the call just placed (placed) and
// counts the sidebands attached to it (attached); it waits until all are.
func placeHeld(b *testing.B, f fixture, n int, mode string, placed func() string, attached func() int) []heldCall {
	b.Helper()
	calls := make([]heldCall, 0, n)
	for range n {
		p := auth.Principal{UserID: newUser(b, "pro").UserID, Plan: "pro"}
		start := mustStart(b, f, p, `{"mode":"`+mode+`"}`)
		if w := postOffer(b, f, p, start.SessionID, "application/sdp", minimalOffer); w.Code != http.StatusCreated {
			b.Fatalf("offer: %d %s", w.Code, w.Body)
		}
		calls = append(calls, heldCall{placed(), start.SessionID, p})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	testkit.Eventually(b, ctx, fmt.Sprintf("%d sidebands attached", n), func() bool { return attached() >= n })
	return calls
}

func benchFixture(b *testing.B, fake *fakeCalls, url string, reg *prometheus.Registry) fixture {
	b.Helper()
	return newFixture(b, options{sim: fake.sim, simURL: url, poolSize: 8, registry: reg,
		configFn: func(c *config.Voice) { c.ToolCallsPerMinute = 1 << 30; c.IdleTimeout = time.Hour }})
}

// The tool round trip the gateway adds in sideband mode at 100 held
// sessions: from the function call's last event sent by the provider to
// its function_call_output received, with an echo tool that takes no time
// of its own. Every call goes through the executor (its exactly-once row)
// and the per-session rate limit, as in production. The baseline, in the
// same run at the same pace, is the same calls through ExecuteTool on 100
// direct sessions (a sideband session refuses ExecuteTool: the gateway
// reads its calls itself): the window and the executor without the socket.
func BenchmarkSidebandToolRoundTrip(b *testing.B) {
	fake, url := newFakeCalls(b)
	reg := prometheus.NewRegistry()
	f := benchFixture(b, fake, url, reg)
	calls := holdSessions(b, f, fake, 100)
	direct := make([]heldCall, len(calls))
	for i := range direct {
		p := auth.Principal{UserID: newUser(b, "pro").UserID, Plan: "pro"}
		direct[i] = heldCall{sessionID: mustStart(b, f, p, `{}`).SessionID, p: p}
	}
	b.ResetTimer()
	per := max(b.N/len(calls), 1)
	paced(calls, per, func(i, j int, c heldCall) error {
		fake.callTool(c.callID, fmt.Sprintf("call_%d_%d", i, j))
		return nil
	})
	got := make([]time.Duration, 0, per*len(calls))
	for len(got) < per*len(calls) {
		select {
		case d := <-fake.answers:
			got = append(got, d)
		case <-time.After(10 * time.Second):
			b.Fatalf("%d of %d calls answered", len(got), per*len(calls))
		}
	}
	b.StopTimer()
	base := make([]time.Duration, 0, per*len(calls))
	var bmu sync.Mutex
	err := paced(direct, per, func(i, j int, c heldCall) error {
		began := time.Now()
		_, err := f.svc.ExecuteTool(context.Background(), c.p, c.sessionID, controlplane.ToolCallRequest{
			CallID: fmt.Sprintf("base_%d_%d", i, j), Name: "echo", Arguments: json.RawMessage(`{"q":"x"}`)})
		d := time.Since(began)
		if err != nil {
			return fmt.Errorf("baseline ExecuteTool on direct session %s: %w", c.sessionID, err)
		}
		bmu.Lock()
		base = append(base, d)
		bmu.Unlock()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	gotP50, gotP99 := latency.Millis(b, got, .5), latency.Millis(b, got, .99)
	baseP50, baseP99 := latency.Millis(b, base, .5), latency.Millis(b, base, .99)
	b.ReportMetric(gotP50, "p50-ms")
	b.ReportMetric(gotP99, "p99-ms")
	b.ReportMetric(baseP50, "base-p50-ms")
	b.ReportMetric(baseP99, "base-p99-ms")
	b.ReportMetric(gotP50-baseP50, "added-p50-ms")
	b.ReportMetric(gotP99-baseP99, "added-p99-ms")
	b.ReportMetric(float64(len(got)), "calls")
	// The holder's own part, without the executor: the histogram's
	// bucket bounds at p50 and p99.
	b.ReportMetric(bucketQuantile(b, reg, "voxgate_voice_sideband_tool_overhead_seconds", .5)*1000, "holder-p50≤ms")
	b.ReportMetric(bucketQuantile(b, reg, "voxgate_voice_sideband_tool_overhead_seconds", .99)*1000, "holder-p99≤ms")
}

// paced runs per calls of op for each session at a call a second per
// session, the sessions spread over the second (100 sessions: 100
// calls/s), and returns the first error; a session stops at its first.
func paced(sessions []heldCall, per int, op func(i, j int, c heldCall) error) error {
	return pacedEvery(sessions, per, time.Second, op)
}

// pacedEvery is paced at a call every period per session.
func pacedEvery(sessions []heldCall, per int, every time.Duration, op func(i, j int, c heldCall) error) error {
	var wg sync.WaitGroup
	var first atomic.Pointer[error]
	for i, c := range sessions {
		wg.Go(func() {
			// measurement window: the sessions' calls are staggered over a
			// period, the load's pace being what the benchmark measures.
			time.Sleep(time.Duration(i) * every / time.Duration(len(sessions)))
			for j := range per {
				if j > 0 {
					time.Sleep(every) // measurement window: a call every period per session
				}
				if err := op(i, j, c); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := first.Load(); err != nil {
		return *err
	}
	return nil
}

// bucketQuantile is the upper bound of the histogram bucket holding
// quantile q. A histogram that is missing or holds no sample fails the
// benchmark, as latency.Millis does for an empty sample: its bound would
// be a figure nothing was measured for.
func bucketQuantile(b *testing.B, reg *prometheus.Registry, name string, q float64) float64 {
	b.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() == 0 {
			break
		}
		for _, bk := range h.GetBucket() {
			if float64(bk.GetCumulativeCount()) >= q*float64(h.GetSampleCount()) {
				return bk.GetUpperBound()
			}
		}
		return math.Inf(1)
	}
	b.Fatalf("%s: no sample to take quantile %v of", name, q)
	return 0
}

// Holding 500 idle sideband sessions: memory per session (heap and
// goroutine stacks) and the database writes lease upkeep costs per
// second, beside the session count.
//
// With -short (scripts/bench-smoke.sh) it holds 50 for a second and does
// not wait for PostgreSQL's late statistics: it shows the benchmark runs,
// its figures are not the documented ones.
func BenchmarkSidebandHeld(b *testing.B) {
	n, idle, statsLag := 500, 10*time.Second, 11*time.Second
	if testing.Short() {
		n, idle, statsLag = 50, time.Second, 0
	}
	fake, url := newFakeCalls(b)
	f := benchFixture(b, fake, url, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.svc.Run(ctx)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	holdSessions(b, f, fake, n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSession := float64(int64(after.HeapInuse+after.StackInuse)-int64(before.HeapInuse+before.StackInuse)) / float64(n)
	writes := func() int64 {
		var w int64
		if err := f.pool.QueryRow(ctx, `SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint
			FROM pg_stat_user_tables WHERE relname IN ('voice_replicas', 'voice_sessions')`).Scan(&w); err != nil {
			b.Fatal(err)
		}
		return w
	}
	// Backends report their statistics late (an idle one within 10 s):
	// let the starts' writes land before counting.
	time.Sleep(statsLag) // measurement window: the server's statistics lag, which nothing signals
	var cpuBefore, cpuAfter time.Duration
	cpuBefore = processCPU()
	w0, began := writes(), time.Now()
	b.ResetTimer()
	time.Sleep(idle) // measurement window: idle, the lease loop runs, nothing else
	b.StopTimer()
	time.Sleep(statsLag) // measurement window: the window's statistics, reported late

	w1, took := writes(), time.Since(began)
	cpuAfter = processCPU()
	b.ReportMetric(float64(n), "sessions")
	b.ReportMetric(perSession/1024, "KB/session")
	b.ReportMetric(float64(w1-w0)/took.Seconds(), "db-writes/s")
	b.ReportMetric(float64((cpuAfter-cpuBefore).Microseconds())/took.Seconds()/float64(n), "cpu-µs/s/session")
	if f.svc.Held() != n {
		b.Fatalf("held %d of %d", f.svc.Held(), n)
	}
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
