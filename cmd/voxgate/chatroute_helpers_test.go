package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// upstream is one simulated provider behind a recording proxy: the body
// and arrival time of every model call it received.
type upstream struct {
	sim *sim.Server
	url string

	mu     sync.Mutex
	bodies [][]byte
	hits   []time.Time
	// before, when set, sees each model call's body before the simulator
	// serves it (to set a fault for that very call).
	before func(body []byte)
}

func newUpstream(t *testing.T, cfg sim.Config) *upstream {
	t.Helper()
	cfg.Latency = simtest.ZeroLatency()
	s, _ := simtest.NewServer(t, cfg)
	u := &upstream{sim: s}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost {
			u.mu.Lock()
			u.bodies, u.hits = append(u.bodies, body), append(u.hits, time.Now())
			before := u.before
			u.mu.Unlock()
			if before != nil {
				before(body)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	u.url = proxy.URL
	return u
}

// fault sets f on every endpoint of its kind.
func (u *upstream) fault(t *testing.T, f sim.Fault) {
	t.Helper()
	if _, err := u.sim.AddFault(f); err != nil {
		t.Fatal(err)
	}
}

// calls are the model calls the upstream received, and when.
func (u *upstream) calls() ([][]byte, []time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.bodies...), append([]time.Time(nil), u.hits...)
}

func (u *upstream) count() int { b, _ := u.calls(); return len(b) }

// gateway is the real Main with chat.route "default" over two providers
// of two vendors: primary (OpenAI, gpt-6-luna), then fallback (Gemini,
// gemini-3.8-flash), each a simulator behind its own recording proxy.
type gateway struct {
	m                 *Main
	primary, fallback *upstream
}

const (
	primaryModel  = "gpt-6-luna"
	fallbackModel = "gemini-3.8-flash"
)

// startGateway boots it; tune may change the config (the route's
// deadlines, the degraded answer) and the simulators' config before they
// start.
func startGateway(t *testing.T, simCfg func(primary, fallback *sim.Config), tune func(*config.Config)) *gateway {
	t.Helper()
	return startGatewayWith(t, simCfg, tune, nil)
}

// startGatewayWith is startGateway with main, when set, changing Main
// before it runs (its clocks).
func startGatewayWith(t *testing.T, simCfg func(primary, fallback *sim.Config), tune func(*config.Config), main func(*Main)) *gateway {
	t.Helper()
	var pc, fc sim.Config
	if simCfg != nil {
		simCfg(&pc, &fc)
	}
	g := &gateway{primary: newUpstream(t, pc), fallback: newUpstream(t, fc)}
	env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t, demo.Migrations), "VOXGATE_JWT_SECRET": testSecret,
		"VOXGATE_ADDR": "127.0.0.1:0", "PRIMARY_KEY": simtest.TestKey, "FALLBACK_KEY": simtest.TestKey}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 4
	cfg.Database.SpoolDir = t.TempDir()
	cfg.Demo.Enabled = true
	cfg.Providers = []config.Provider{
		{Name: "primary", Kind: config.KindOpenAI, BaseURL: g.primary.url + "/v1", KeyEnv: "PRIMARY_KEY"},
		{Name: "fallback", Kind: config.KindGemini, BaseURL: g.fallback.url, KeyEnv: "FALLBACK_KEY"},
	}
	cfg.Routes = []config.Route{{Name: config.DefaultRoute, Targets: []config.RouteTarget{
		{Provider: "primary", Model: primaryModel}, {Provider: "fallback", Model: fallbackModel}}}}
	if tune != nil {
		tune(cfg)
	}
	m := &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{}), Getenv: func(k string) string { return env[k] }}
	if main != nil {
		main(m)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	g.m = m
	return g
}

// sseEvent is one event of a chat stream.
type sseEvent struct {
	Type string
	Data map[string]any
}

// chatReply is a POST /v1/chat answer: a stream's events, or a JSON body.
type chatReply struct {
	Status int
	Header http.Header
	Events []sseEvent
	Body   map[string]any
	Raw    string
}

func (r chatReply) types() []string {
	var out []string
	for _, e := range r.Events {
		if len(out) == 0 || e.Type != "content" || out[len(out)-1] != "content" {
			out = append(out, e.Type)
		}
	}
	return out
}

func (r chatReply) last() sseEvent {
	if len(r.Events) == 0 {
		return sseEvent{}
	}
	return r.Events[len(r.Events)-1]
}

// response is the done event's response, or the JSON body.
func (r chatReply) response() map[string]any {
	if r.Body != nil {
		return r.Body
	}
	if r.last().Type == "done" {
		resp, _ := r.last().Data["response"].(map[string]any)
		return resp
	}
	return nil
}

// chat posts one turn as user and reads the whole answer.
func (g *gateway) chat(t *testing.T, user, body string) chatReply {
	t.Helper()
	// A bound far past the route's budget, so that no case can hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp := postChat(t, ctx, g.m.URL(), mint(t, user, "", "pro"), body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := chatReply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_ = json.Unmarshal(raw, &out.Body)
		return out
	}
	out.Events = parseEvents(t, raw)
	return out
}

// parseEvents reads a whole chat stream's events.
func parseEvents(t *testing.T, raw []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && cur.Type != "":
			out = append(out, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				t.Fatalf("event %s: %v", cur.Type, err)
			}
		}
	}
	return out
}

// record is a usage record as the ledger stored it.
type record struct {
	Kind, Provider, Model, TurnID, UsageSource string
	TextIn, TextOut                            int64
	CostMicros                                 *int64
}

// records are user's usage records, oldest first.
func (g *gateway) records(t *testing.T, user string) []record {
	t.Helper()
	rows, err := g.m.Pool.Query(context.Background(), `SELECT kind, provider, model, turn_id, usage_source, text_in, text_out, cost_micros
		FROM usage_records WHERE user_id = $1 ORDER BY id`, user)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		if err := rows.Scan(&r.Kind, &r.Provider, &r.Model, &r.TurnID, &r.UsageSource, &r.TextIn, &r.TextOut, &r.CostMicros); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// audit is the failover_trace entries of user's one turn ("<call>
// <provider>/<model>:<outcome>"), as an admin reads them through GET
// /v1/admin/chat/turns/{turn_id}, and the row's provider, model and
// status (followed by its error_code, when it has one).
func (g *gateway) audit(t *testing.T, user string) (entries []string, provider, model, status string) {
	t.Helper()
	var turn string
	if err := g.m.Pool.QueryRow(context.Background(),
		`SELECT turn_id FROM usage_records WHERE user_id = $1 AND kind = 'chat'`, user).Scan(&turn); err != nil {
		t.Fatalf("the turn's chat record: %v", err)
	}
	code, _, body := call(t, "GET", g.m.URL()+"/v1/admin/chat/turns/"+turn, mint(t, "ops", "admin", ""), nil)
	var a struct {
		Provider, Model, Status string
		ErrorCode               string `json:"error_code"`
		FailoverTrace           []struct {
			Call  int    `json:"call"`
			Entry string `json:"entry"`
		} `json:"failover_trace"`
	}
	if err := json.Unmarshal([]byte(body), &a); code != 200 || err != nil {
		t.Fatalf("GET the turn's audit: %d %s", code, body)
	}
	for _, e := range a.FailoverTrace {
		entries = append(entries, fmt.Sprintf("%d %s", e.Call, e.Entry))
	}
	return entries, a.Provider, a.Model, strings.TrimSpace(a.Status + " " + a.ErrorCode)
}

// breakerItem is one target's breaker as GET /v1/admin/providers shows it.
type breakerItem struct {
	Provider, State, Reason string
	Failures                int
	Configured              bool
}

// breakers are every target's breaker, in route order, as an admin reads
// them through GET /v1/admin/providers.
func (g *gateway) breakers(t *testing.T) []breakerItem {
	t.Helper()
	code, _, body := call(t, "GET", g.m.URL()+"/v1/admin/providers", mint(t, "ops", "admin", ""), nil)
	var st struct{ Items []breakerItem }
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || len(st.Items) != 2 {
		t.Fatalf("GET /v1/admin/providers: %d %s", code, body)
	}
	return st.Items
}
