package chat_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/chat"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/unit"
)

func quiet() *slog.Logger { return testkit.Quiet() }

// counts are how often the test tools ran.
type counts struct{ search, log, always atomic.Int64 }

func testTools(c *counts) []*tools.Tool {
	obj := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`)
	return []*tools.Tool{
		{Name: "search_items", Description: "Searches the catalogue.", Parameters: obj,
			Run: func(_ context.Context, inv tools.Invocation) (tools.Outcome, error) {
				c.search.Add(1)
				card, _ := tools.NewCard("item", map[string]any{"id": 7, "title": "Tomato soup"})
				return tools.Outcome{Data: map[string]any{"items": []string{"Tomato soup"}}, Partials: []tools.Card{card}}, nil
			}},
		{Name: "log_item", Description: "Log an item to your diary.", Tier: tools.TierStandard,
			Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`),
			Run: func(_ context.Context, inv tools.Invocation) (tools.Outcome, error) {
				c.log.Add(1)
				return tools.Outcome{Data: map[string]any{"logged": true}}, nil
			}},
		{Name: "always", Description: "Ping the catalogue.", Parameters: obj,
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				c.always.Add(1)
				return tools.Outcome{Data: map[string]any{"ok": true}}, nil
			}},
		{Name: "many_items", Description: "Lists the whole catalogue.", Parameters: obj,
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				var out tools.Outcome
				for i := range 60 {
					card, _ := tools.NewCard("item", map[string]any{"id": i})
					out.Cards = append(out.Cards, card)
					if i < 55 {
						out.Partials = append(out.Partials, card)
					}
				}
				out.Data = map[string]any{"count": 60}
				return out, nil
			}},
		{Name: "pro_report", Description: "A report for pro users.", Parameters: obj, Plans: []string{"pro"},
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				return tools.Outcome{Data: map[string]any{"ok": true}}, nil
			}},
		{Name: "remedy_cards", Description: "Lists folk remedy cards.", Parameters: obj,
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				good, _ := tools.NewCard("remedy", map[string]any{"title": "Ginger tea", "note": "A warm drink for a cold evening."})
				bad, _ := tools.NewCard("remedy", map[string]any{"title": "Garlic syrup", "note": "Garlic cures infections."})
				return tools.Outcome{Data: map[string]any{"count": 2}, Cards: []tools.Card{good, bad}, Partials: []tools.Card{good, bad}}, nil
			}},
		{Name: "profile", Description: "The user's profile.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				return tools.Outcome{Data: map[string]any{"display_name": "Alice Secretname", "diet": "vegetarian", "language": "en"}}, nil
			}},
	}
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// script is the simulated model of these tests.
func script() sim.Script {
	return sim.Script{Text: "Hello there.", Rules: []sim.Rule{
		{Name: "find", When: sim.When{Contains: []string{"find"}, ToolResults: no()},
			Reply: sim.Reply{Text: "Let me look. ", ToolCalls: []sim.ScriptCall{{Name: "search_items", Arguments: map[string]any{"q": "soup"}}}}},
		{Name: "found", When: sim.When{Contains: []string{"find"}, ToolResults: yes()}, Reply: sim.Reply{Text: "I found tomato soup."}},
		{Name: "log bad", When: sim.When{Contains: []string{"wrongly"}, ToolResults: no()},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "log_item", Arguments: map[string]any{"name": ""}}}}},
		{Name: "log", When: sim.When{Contains: []string{"log"}, ToolResults: no()},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "log_item", Arguments: map[string]any{"name": "oats"}}}}},
		{Name: "logged", When: sim.When{Contains: []string{"log", "wrongly"}, ToolResults: yes()}, Reply: sim.Reply{Text: "Done with {{tool_names}}."}},
		{Name: "loop", When: sim.When{Contains: []string{"loop"}},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "always", Arguments: map[string]any{"q": "x"}}}}},
		{Name: "inventory", When: sim.When{Contains: []string{"inventory"}, ToolResults: no()},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "many_items", Arguments: map[string]any{"q": "all"}}}}},
		{Name: "inventoried", When: sim.When{Contains: []string{"inventory"}, ToolResults: yes()}, Reply: sim.Reply{Text: "Here is everything."}},
		{Name: "long", When: sim.When{Contains: []string{"ramble"}}, Reply: sim.Reply{TextTokens: 2100}},
		{Name: "slow", When: sim.When{Contains: []string{"story"}}, Reply: sim.Reply{Text: "Hi. Once upon a time ", TextTokens: 200}}, // a short sentence first: the output filter lets it out at once
	}}
}

// fixture is one replica's chat service over a database and a simulator.
type fixture struct {
	svc    *chat.Service
	pool   *pgxpool.Pool
	sim    *sim.Server
	url    string // the gateway's test HTTP server
	simURL string
	dbURL  string
	runs   *counts
}

type options struct {
	simCfg *sim.Config
	sim    *sim.Server
	simURL string
	simTLS *http.Client // the TLS simulator's client, which trusts it
	dbURL  string
	plans  func(*config.Quota)
	cfg    func(*config.Chat)
	// noContextTool answers without the profile tool.
	noContextTool bool
	timeout       time.Duration // the provider's per-event timeout
	idle          bool          // the route waits as long as the adapter does (idle-stream benchmarks)
	poolSize      int32         // default 6
	// tls serves the simulator over TLS and HTTP/2, as the real API is.
	tls bool
	// provider, when set, wraps the provider the service calls.
	provider func(llm.Provider) llm.Provider
	// capture, when set, receives every Chat Completions request body.
	capture chan<- []byte
	// safetyIDs make the users' safety identifiers; the zero value none.
	safetyIDs safety.Identifiers
	// logs, when set, receives the service's log lines (JSON).
	logs io.Writer
	// spool, when set, is the service's durable path.
	spool *spool.Spool
	// moreModels are models of further route targets, beside chat.model
	// (the reservation prices at the dearest).
	moreModels []string
	// moreTools join testTools.
	moreTools []*tools.Tool
	// registry, when set, takes the service's metrics.
	registry *prometheus.Registry
	// production serves POST /v1/chat behind the server's own middleware
	// and JWT auth, as cmd/voxgate mounts it (see productionRoutes).
	production bool
	// quotaNow is quota's clock; nil is the database's.
	quotaNow func() time.Time
	// judge, when set, is the safety filter's judge: its route joins the
	// router, with chat.model on the simulator as its one target.
	judge *judge.Config
}

// testQuota opens the request windows so tests hit only what they mean to,
// and lets a user run four turns at once.
func testQuota() config.Quota {
	q := testgraph.OpenQuota()
	for name, p := range q.Plans {
		p.ConcurrentTurns = 4
		q.Plans[name] = p
	}
	return q
}

// testRoute is chat.route with one target, chat.model on the simulator.
// An idle fixture lifts the route's own deadlines (the 25 s budget, the
// first-content wait), so that only the adapter's bound a stream that
// waits on a silent model.
func testRoute(cfg config.Chat, o options) llm.Route {
	rt := llm.Route{Name: cfg.Route, Targets: []llm.Target{{Provider: "openai", Model: cfg.Model, Timeout: o.timeout}}}
	if o.idle {
		rt.Budget, rt.Targets[0].FirstContent = time.Hour, time.Hour
	}
	return rt
}

// testRoutes are chat.route's, and the judge's when the test has one.
func testRoutes(cfg config.Chat, o options) []llm.Route {
	rts := []llm.Route{testRoute(cfg, o)}
	if o.judge != nil {
		rts = append(rts, llm.Route{Name: o.judge.Route, Targets: []llm.Target{{Provider: "openai", Model: cfg.Model}}})
	}
	return rts
}

func newFixture(t testing.TB, o options) *fixture {
	t.Helper()
	simCfg := sim.Config{Script: script()}
	if o.simCfg != nil {
		simCfg = *o.simCfg
	}
	qcfg := testQuota()
	if o.plans != nil {
		o.plans(&qcfg)
	}
	runs := &counts{}
	g := testgraph.NewGraph(t, testgraph.Options{DBURL: o.dbURL, PoolSize: o.poolSize, Sim: o.sim, SimURL: o.simURL,
		SimConfig: simCfg, SimTLS: o.tls, Quota: qcfg, QuotaNow: o.quotaNow, Tools: append(testTools(runs), o.moreTools...)})
	o.simURL = g.SimURL
	if g.SimServer != nil {
		o.simTLS = g.SimServer.Client()
		if o.capture != nil {
			o.simURL = testgraph.Spy(t, g, o.capture)
		}
	}
	pp := openai.Params{BaseURL: o.simURL + "/v1", APIKey: simtest.TestKey, Timeout: o.timeout}
	if o.idle && pp.Timeout == 0 {
		// The idle benchmarks hold every stream on a silent model while
		// they open the rest, one at a time: the adapter's 10 s would end
		// the first ones before the last had opened on a slow machine.
		pp.Timeout = time.Hour
	}
	if o.tls {
		tr := llm.NewTransport()
		tr.TLSClientConfig = o.simTLS.Transport.(*http.Transport).TLSClientConfig
		pp.HTTPClient = &http.Client{Transport: tr}
	}
	var provider llm.Provider
	provider, err := openai.New(pp)
	if err != nil {
		t.Fatal(err)
	}
	if o.provider != nil {
		provider = o.provider(provider)
	}
	cfg := config.DefaultChat()
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	// The service calls the router, as cmd/voxgate wires it: chat.route
	// with one target, chat.model on the simulator, unless the test
	// brings a router of its own.
	var router llm.Provider = provider
	if _, routed := provider.(interface{ Routes() []string }); !routed {
		router, err = llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"openai": provider},
			Routes: testRoutes(cfg, o)})
		if err != nil {
			t.Fatal(err)
		}
	}
	contextTool := "profile"
	if o.noContextTool {
		contextTool = ""
	}
	log := quiet()
	if o.logs != nil {
		log = slog.New(slog.NewJSONHandler(o.logs, nil))
	}
	var reg prometheus.Registerer // a nil *Registry would be a non-nil Registerer
	if o.registry != nil {
		reg = o.registry
	}
	var jc judge.Config
	if o.judge != nil {
		jc = *o.judge
	}
	env := testEnv(t, &g, router, o.spool, log, o.safetyIDs, jc)
	svc, err := chat.New(chat.Params{Env: env, Tools: g.Tools, RouteModels: append([]string{cfg.Model}, o.moreModels...),
		Config: cfg, ContextTool: contextTool, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	handler := routes(svc)
	if o.production {
		handler = productionRoutes(t, g.Pool, svc)
	}
	// HTTP/1.1 and HTTP/2 without TLS, as cmd/voxgate serves.
	ts := httptest.NewUnstartedServer(handler)
	ts.Config.Protocols = testkit.BothProtocols()
	ts.Start()
	t.Cleanup(ts.Close)
	return &fixture{svc: svc, pool: g.Pool, sim: g.Sim, simURL: o.simURL, url: ts.URL, dbURL: g.DBURL, runs: runs}
}

// testEnv is the unit.Env the service works with, as cmd/voxgate builds
// it; a nil sp is a spool of the test's own.
func testEnv(t testing.TB, g *testgraph.Graph, router llm.Provider, sp *spool.Spool, log *slog.Logger, ids safety.Identifiers, jc judge.Config) *unit.Env {
	t.Helper()
	if sp == nil {
		var err error
		if sp, err = spool.New(spool.Params{Logger: log}); err != nil {
			t.Fatal(err)
		}
	}
	return &unit.Env{Pool: g.Pool, Quota: g.Quota, Provider: router, Ledger: g.Ledger, Audit: audit.New(g.Pool),
		Spool: sp, SafetyIDs: ids, Judge: jc, Log: log}
}

// routes serves the chat routes with the caller named by X-Test-User (and
// X-Test-Plan), standing in for JWT auth, which has its own tests.
func routes(svc *chat.Service) http.Handler {
	mux := http.NewServeMux()
	user := func(h httpx.HandlerFunc) http.Handler {
		return httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
			p := auth.Principal{UserID: r.Header.Get("X-Test-User"), Plan: r.Header.Get("X-Test-Plan")}
			return h(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
		})
	}
	mux.Handle("POST /v1/chat", user(svc.HandleChat))
	mux.Handle("GET /v1/chat/sessions", user(svc.HandleList))
	mux.Handle("GET /v1/chat/sessions/{id}/messages", user(svc.HandleMessages))
	mux.Handle("DELETE /v1/chat/sessions/{id}", user(svc.HandleDelete))
	return mux
}

// event is one parsed SSE event.
type event struct {
	ID   string
	Type string
	Data map[string]any
	Raw  string
}

// reply is a chat response: a stream's events, or a JSON body.
type reply struct {
	Status int
	Header http.Header
	Events []event
	Pings  int
	Body   map[string]any
}

func (r reply) types() []string {
	var out []string
	for _, e := range r.Events {
		out = append(out, e.Type)
	}
	return out
}

// collapsed is types with each run of content events as one.
func (r reply) collapsed() []string {
	var out []string
	for _, e := range r.Events {
		if e.Type == "content" && len(out) > 0 && out[len(out)-1] == "content" {
			continue
		}
		out = append(out, e.Type)
	}
	return out
}

func (r reply) last() event { return r.Events[len(r.Events)-1] }

// response is the done event's response.
func (r reply) response(t testing.TB) map[string]any {
	t.Helper()
	if len(r.Events) == 0 || r.last().Type != "done" {
		t.Fatalf("no done event: %v (body %v)", r.types(), r.Body)
	}
	return r.last().Data["response"].(map[string]any)
}

type call struct {
	user, plan, key string
	body            map[string]any
}

func (f *fixture) post(t testing.TB, c call) reply {
	t.Helper()
	resp := f.do(t, context.Background(), c)
	defer resp.Body.Close()
	return readReply(t, resp)
}

func (f *fixture) do(t testing.TB, ctx context.Context, c call) *http.Response {
	t.Helper()
	b, _ := json.Marshal(c.body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/v1/chat", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-User", c.user)
	if c.plan != "" {
		req.Header.Set("X-Test-Plan", c.plan)
	}
	if c.key != "" {
		req.Header.Set("Idempotency-Key", c.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readReply(t testing.TB, resp *http.Response) reply {
	t.Helper()
	out := reply{Status: resp.StatusCode, Header: resp.Header}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_ = json.NewDecoder(resp.Body).Decode(&out.Body)
		return out
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Type != "" {
				if err := json.Unmarshal([]byte(cur.Raw), &cur.Data); err != nil {
					t.Fatalf("event %s: data %q: %v", cur.Type, cur.Raw, err)
				}
				out.Events = append(out.Events, cur)
			}
			cur = event{}
		case line == ": ping":
			out.Pings++
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Raw += strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

func (f *fixture) get(t testing.TB, user, path string) (int, map[string]any) {
	t.Helper()
	return f.send(t, http.MethodGet, user, path)
}

func (f *fixture) send(t testing.TB, method, user, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, nil)
	req.Header.Set("X-Test-User", user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// count is sql's one integer.
func (f *fixture) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	return testgraph.Count(t, f.pool, sql, args...)
}

func simURL(f *fixture) string { return f.simURL }

func chatStats(s *sim.Server) sim.EndpointStats {
	return s.Stats().Endpoints["/v1/chat/completions"]
}
