package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// fakeLive is a bare GPT-Live provider for the delegation benchmark:
// sessions are created without media, each sideband socket is kept, and
// every session.commentary.append the gateway sends is timed against the
// session.delegation.created that asked for it. The backend model's chat
// completions go to a zero-latency simulator behind the same address, so
// the gateway's one base URL serves both.
type fakeLive struct {
	sim      *sim.Server
	n        atomic.Int64
	mu       sync.Mutex
	socks    map[string]*fakeSock
	sent     sync.Map // delegation id → time its created event went out
	answers  chan liveAnswer
	thinking atomic.Int64
}

// liveAnswer is one delegation's commentary, as the provider got it.
type liveAnswer struct {
	id      string
	took    time.Duration // created sent → commentary read
	content string
}

func newFakeLive(t testing.TB) (*fakeLive, string) {
	cfg := sim.Config{Script: liveScript(), Latency: simtest.ZeroLatency()}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLive{sim: s, socks: map[string]*fakeSock{}, answers: make(chan liveAnswer, 1<<16)}
	up := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", s)
	mux.Handle("POST "+sim.EndpointRealtimeClientSecrets, s)
	mux.HandleFunc("POST /v1/live/sessions", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, `{"session":{"id":"live_bench%08d"},"transport":{"type":"webrtc","sdp":"v=0\r\n"}}`, f.n.Add(1))
	})
	mux.HandleFunc("GET /v1/live/sessions/{id}/attach", func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.socks[r.PathValue("id")] = &fakeSock{conn: conn}
		f.mu.Unlock()
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			read := time.Now()
			var ev struct {
				Type         string `json:"type"`
				DelegationID string `json:"delegation_id"`
				Content      string `json:"content"`
			}
			if json.Unmarshal(data, &ev) != nil {
				continue
			}
			switch ev.Type {
			case "session.commentary.append", "session.instructions.append":
				if at, ok := f.sent.LoadAndDelete(ev.DelegationID); ok {
					f.answers <- liveAnswer{id: ev.DelegationID, took: read.Sub(at.(time.Time)), content: ev.Content}
				}
			case "session.thinking.append":
				f.thinking.Add(1)
			}
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return f, ts.URL
}

// delegate sends one user turn on the session's socket as the API does:
// the input transcript up to offset (so the task is there at once), then
// session.delegation.created at that offset. It times from the latter.
func (f *fakeLive) delegate(liveID, delegationID, said string, offsetMS int64) {
	f.mu.Lock()
	s := f.socks[liveID]
	f.mu.Unlock()
	heard, _ := json.Marshal(map[string]any{"type": "session.input_transcript.delta", "event_id": "event_h" + delegationID,
		"delta": said, "start_ms": offsetMS - 1000, "end_ms": offsetMS})
	created, _ := json.Marshal(map[string]any{"type": "session.delegation.created", "event_id": "event_d" + delegationID,
		"offset_ms": offsetMS, "delegation": map[string]any{"id": delegationID, "type": "delegation", "target": "client"}})
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.conn.WriteMessage(websocket.TextMessage, heard)
	f.sent.Store(delegationID, time.Now())
	_ = s.conn.WriteMessage(websocket.TextMessage, created)
}

// timedModel wraps the backend and keeps, per task (its tag, the last one
// the task's text names), when its first model call began and its last
// ended: the agent loop's own time, model calls and the tool calls
// between them.
type timedModel struct {
	llm.Provider
	mu    sync.Mutex
	loops map[string]*loopSpan
}

type loopSpan struct{ first, last time.Time }

var taskTag = regexp.MustCompile(`task-[0-9]+-[0-9]+`)

func (m *timedModel) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	tag := ""
	for _, msg := range req.Messages {
		if all := taskTag.FindAllString(msg.Content, -1); msg.Role == llm.RoleUser && len(all) > 0 {
			tag = all[len(all)-1]
		}
	}
	began := time.Now()
	st, err := m.Provider.Stream(ctx, req)
	if err != nil {
		m.note(tag, began, time.Now())
		return nil, err
	}
	return &timedStream{Stream: st, done: func() { m.note(tag, began, time.Now()) }}, nil
}

func (m *timedModel) note(tag string, began, ended time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.loops[tag]
	if s == nil {
		s = &loopSpan{first: began}
		m.loops[tag] = s
	}
	if began.Before(s.first) {
		s.first = began
	}
	if ended.After(s.last) {
		s.last = ended
	}
}

// span is the loop's time for tag.
func (m *timedModel) span(tag string) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.loops[tag]
	if !ok {
		return 0, false
	}
	return s.last.Sub(s.first), true
}

// timedStream notes its call's end at its last event (or error), or at
// Close when it was not read to the end.
type timedStream struct {
	llm.Stream
	once sync.Once
	done func()
}

func (s *timedStream) Next(ctx context.Context) (llm.Event, error) {
	ev, err := s.Stream.Next(ctx)
	if err != nil {
		s.once.Do(s.done)
	}
	return ev, err
}

func (s *timedStream) Close() error {
	s.once.Do(s.done)
	return s.Stream.Close()
}

// The overhead of a delegation at 100 held live sessions: from
// session.delegation.created sent by the provider (its transcript already
// there) to the commentary read back on the same socket, less that
// delegation's agent loop (its first model call's start to its last one's
// end: the model calls and the tool call between them). The claim, the
// audit row, the task, the holder's hops and both sideband sockets'
// writes are what remains. Each session takes a turn once a second (100
// turns/s, the sideband benchmark's pace) or once every five seconds
// (20/s), its turns alternating between a delegation and the baseline:
// the same task through agent.Run directly, its tool call through
// ExecuteTool on a direct session (the window and the executor the
// delegation's call takes too). Alternating, both meet the same machine.
//
// Under -short (scripts/bench-smoke.sh) it holds 10 sessions at one pace.
func BenchmarkLiveDelegation(b *testing.B) {
	sessions, paces := 100, []time.Duration{time.Second, 5 * time.Second}
	if testing.Short() {
		sessions, paces = 10, paces[:1]
	}
	for _, every := range paces {
		b.Run(fmt.Sprintf("rate=%d/s", int(float64(sessions)/every.Seconds())), func(b *testing.B) {
			benchLiveDelegation(b, sessions, every)
		})
	}
}

func benchLiveDelegation(b *testing.B, sessions int, every time.Duration) {
	fake, url := newFakeLive(b)
	model := &timedModel{loops: map[string]*loopSpan{}}
	f := newFixture(b, options{sim: fake.sim, simURL: url, poolSize: 20, backend: "gpt-4.1-mini",
		wrapBackend: func(p llm.Provider) llm.Provider { model.Provider = p; return model },
		configFn:    func(c *config.Voice) { c.ToolCallsPerMinute = 1 << 30; c.IdleTimeout = time.Hour }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.svc.Run(ctx)
	calls := placeHeld(b, f, sessions, "live", func() string { return fmt.Sprintf("live_bench%08d", fake.n.Load()) },
		func() int { fake.mu.Lock(); defer fake.mu.Unlock(); return len(fake.socks) })
	direct := make([]heldCall, len(calls))
	for i := range direct {
		p := auth.Principal{UserID: newUser(b, "pro").UserID, Plan: "pro"}
		direct[i] = heldCall{sessionID: mustStart(b, f, p, `{}`).SessionID, p: p}
	}
	tools := []llm.ToolSpec{{Name: "echo", Description: "Echoes its arguments.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":9000}},"additionalProperties":false}`)}}
	per := max(b.N/len(calls), 2)
	total := per * len(calls) / 2 // live delegations; as many direct loops

	// Live delegations and direct loops alternate, session by session and
	// turn by turn, so both meet the same machine.
	base := make([]time.Duration, 0, total)
	var bmu sync.Mutex
	b.ResetTimer()
	err := pacedEvery(calls, per, every, func(i, j int, c heldCall) error {
		if (i+j)%2 == 0 {
			tag := fmt.Sprintf("task-%d-%d", i, j)
			fake.delegate(c.callID, "item_"+tag, "Find me a pasta recipe, "+tag, int64(j+1)*every.Milliseconds())
			return nil
		}
		tag := fmt.Sprintf("base-%d-%d", i, j)
		req := llm.Request{Model: "gpt-4.1-mini", Tools: tools, Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are the backend of a voice assistant."},
			{Role: llm.RoleUser, Content: "user (0–1000 ms): Find me a pasta recipe, " + tag}}}
		began := time.Now()
		res, err := agent.Run(context.Background(), model.Provider, req, &directHost{f: f, c: direct[i], tag: tag})
		took := time.Since(began)
		if err != nil || res.Text != "Try the lemon pasta with peas tonight." {
			return fmt.Errorf("direct loop %s: %q, %v", tag, res.Text, err)
		}
		bmu.Lock()
		base = append(base, took)
		bmu.Unlock()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	e2e := make([]time.Duration, 0, total)
	overhead := make([]time.Duration, 0, total)
	loops := make([]time.Duration, 0, total)
	for len(e2e) < total {
		select {
		case a := <-fake.answers:
			if a.content != "Try the lemon pasta with peas tonight." {
				b.Fatalf("delegation %s answered %q", a.id, a.content)
			}
			loop, ok := model.span(a.id[len("item_"):])
			if !ok {
				b.Fatalf("delegation %s answered without a model call", a.id)
			}
			e2e, loops, overhead = append(e2e, a.took), append(loops, loop), append(overhead, a.took-loop)
		case <-time.After(20 * time.Second):
			b.Fatalf("%d of %d delegations answered", len(e2e), total)
		}
	}
	b.StopTimer()
	if n := fake.thinking.Load(); n < int64(total) {
		b.Fatalf("%d thinking appends for %d delegations", n, total)
	}
	p50, p99 := latency.Millis(b, overhead, .5), latency.Millis(b, overhead, .99)
	baseP50 := latency.Millis(b, base, .5)
	b.ReportMetric(p50, "overhead-p50-ms")
	b.ReportMetric(p99, "overhead-p99-ms")
	b.ReportMetric(latency.Millis(b, e2e, .5), "e2e-p50-ms")
	b.ReportMetric(latency.Millis(b, e2e, .99), "e2e-p99-ms")
	b.ReportMetric(latency.Millis(b, loops, .5), "loop-p50-ms")
	b.ReportMetric(baseP50, "direct-p50-ms")
	b.ReportMetric(latency.Millis(b, base, .99), "direct-p99-ms")
	b.ReportMetric(latency.Millis(b, e2e, .5)/baseP50, "e2e/direct-p50")
	b.ReportMetric(p50/baseP50, "overhead/direct-p50")
	b.ReportMetric(float64(total), "delegations")
	b.ReportMetric(0, "ns/op")
}

// directHost is the baseline loop's host: nothing shown, each tool call
// through ExecuteTool on the direct session c.
type directHost struct {
	f   fixture
	c   heldCall
	tag string
	n   int
}

func (h *directHost) Progress(context.Context, agent.Phase, bool) error { return nil }
func (h *directHost) Text(context.Context, string) error                { return nil }

func (h *directHost) Call(ctx context.Context, tc llm.ToolCall, _ string) (agent.Outcome, error) {
	h.n++
	res, err := h.f.svc.ExecuteTool(ctx, h.c.p, h.c.sessionID, controlplane.ToolCallRequest{
		CallID: fmt.Sprintf("%s.%d", h.tag, h.n), Name: tc.Name, Arguments: json.RawMessage(tc.Arguments)})
	if err != nil {
		return agent.Outcome{}, err
	}
	return agent.Outcome{Output: res.Output}, nil
}
