package completions_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	llmopenai "github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	simopenai "github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The routes of the completions tests: "chat" tries the primary
// simulator, then the fallback; "solo" only the primary; "premium" is
// the pro plan's alone; "locked" is a provider whose key the primary
// refuses.
const (
	primaryModel  = "gpt-4.1-mini"
	fallbackModel = "gpt-4o-mini"
	tieredModel   = "gpt-6.2-sol"
	weatherAnswer = "It is sunny in Paris."
	// Short deadlines so that no case waits long, with room for a loaded
	// 2-core machine.
	complFirstContent = 2 * time.Second
	complBudget       = 6 * time.Second
	complRetryDelay   = 100 * time.Millisecond
)

func complScript() sim.Script {
	return sim.Script{Text: "Hello there.", Rules: []sim.Rule{
		{Name: "weather", When: sim.When{Contains: []string{"weather"}, ToolResults: no()},
			Reply: sim.Reply{Text: "Checking. ", ToolCalls: []sim.ScriptCall{{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}}}},
		{Name: "weathered", When: sim.When{Contains: []string{"weather"}, ToolResults: yes()}, Reply: sim.Reply{Text: weatherAnswer}},
		{Name: "story", When: sim.When{Contains: []string{"story"}}, Reply: sim.Reply{Text: "Hi. Once upon a time ", TextTokens: 60}}, // a short sentence first: the output filter lets it out at once
		{Name: "claim", When: sim.When{Contains: []string{"breakfast"}}, Reply: sim.Reply{Text: claimAnswer}},
		{Name: "claim es", When: sim.When{Contains: []string{"desayuno"}}, Reply: sim.Reply{Text: claimAnswerES}},
		{Name: "judge", When: sim.When{Contains: []string{"Sentence:"}}, Reply: sim.Reply{Text: "CLAIM"}},
		{Name: "oats", When: sim.When{Contains: []string{"oats"}}, Reply: sim.Reply{Text: "Sure. " + benignRisky}},
		{Name: "email", When: sim.When{Contains: []string{"coach"}},
			Reply: sim.Reply{Text: "Sure. Your coach is at " + leakEmail + " for questions. Happy training."}},
	}}
}

// upstream is a simulator that notes when each chat request arrived.
type upstream struct {
	sim *sim.Server
	url string // the server's root

	mu       sync.Mutex
	arrivals []time.Time
	bodies   []string       // each chat request's body
	ended    chan time.Time // when each chat request's handler returned
}

func newUpstream(t testing.TB) *upstream { return newUpstreamOn(t, "") }

// newUpstreamOn is an upstream whose project is served on tier ("" the
// simulator's default).
func newUpstreamOn(t testing.TB, tier string) *upstream {
	t.Helper()
	// Each acts as an OpenAI-compatible server that continues a partial
	// answer when asked (continue_final_message): only a target declaring
	// prefill is asked, the "continued" route's fallback.
	s, err := sim.New(sim.Config{Latency: simtest.ZeroLatency(), ShutdownDates: map[string]string{},
		Keys: []string{simtest.TestKey}, Script: complScript(), Chat: simopenai.Chat{ContinueFinalMessage: true, ProjectServiceTier: tier}})
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{sim: s, ended: make(chan time.Time, 64)}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sim.EndpointChatCompletions {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			u.mu.Lock()
			u.arrivals = append(u.arrivals, time.Now())
			u.bodies = append(u.bodies, string(body))
			u.mu.Unlock()
		}
		s.ServeHTTP(w, r)
		if r.URL.Path == sim.EndpointChatCompletions {
			u.ended <- time.Now()
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = s.Close() })
	u.url = ts.URL
	return u
}

func (u *upstream) fault(t testing.TB, f sim.Fault) {
	t.Helper()
	f.Endpoint = sim.EndpointChatCompletions
	if _, err := u.sim.AddFault(f); err != nil {
		t.Fatal(err)
	}
}

func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies...)
}

func (u *upstream) hits() []time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]time.Time(nil), u.arrivals...)
}

// complFixture is the chat service over a router of two simulators,
// serving the completions routes with the caller named by X-Test-User.
type complFixture struct {
	*fixture
	primary, fallback *upstream
	tiered            *upstream // with options.tier
	router            *tracedRouter
	clock             *complClock // the breakers'
	gateway           string      // the completions server's root
	prices            *billing.Prices
}

func newComplFixture(t testing.TB, tune ...func(*options)) *complFixture {
	t.Helper()
	c := &complFixture{primary: newUpstream(t), fallback: newUpstream(t), clock: &complClock{}}
	adapter := func(url, key string) llm.Provider {
		p, err := llmopenai.New(llmopenai.Params{BaseURL: url + "/v1", APIKey: key, Timeout: complFirstContent})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	target := func(provider, model string) llm.Target {
		return llm.Target{Provider: provider, Model: model, FirstContent: complFirstContent, Timeout: complFirstContent}
	}
	continuing := func(provider, model string) llm.Target {
		t := target(provider, model)
		t.Continue = llm.ContinuePrefill
		return t
	}
	o := options{sim: c.primary.sim, simURL: c.primary.url,
		provider: func(llm.Provider) llm.Provider { return c.router },
		plans: func(q *config.Quota) {
			free := q.Plans["free"]
			free.Routes = []string{"chat", "locked", "solo", "continued"}
			q.Plans["free"] = free
			pro := q.Plans["pro"]
			pro.ConcurrentTurns = 1
			q.Plans["pro"] = pro
		}}
	for _, f := range tune {
		f(&o)
	}
	// A test with a judge gets its route, on the primary.
	routes := []llm.Route{
		{Name: "chat", Budget: complBudget, Targets: []llm.Target{target("primary", primaryModel), target("fallback", fallbackModel)}},
		{Name: "solo", Budget: complBudget, Targets: []llm.Target{target("primary", primaryModel)}},
		{Name: "continued", Budget: complBudget, Targets: []llm.Target{target("primary", primaryModel), continuing("fallback", fallbackModel)}},
		{Name: "premium", Budget: complBudget, Targets: []llm.Target{target("primary", primaryModel)}},
		{Name: "locked", Budget: complBudget, Targets: []llm.Target{target("locked", primaryModel)}},
	}
	if o.judge != nil {
		routes = append(routes, llm.Route{Name: o.judge.Route, Budget: complBudget, Targets: []llm.Target{target("primary", primaryModel)}})
	}
	providers := map[string]llm.Provider{
		"primary":  adapter(c.primary.url, simtest.TestKey),
		"fallback": adapter(c.fallback.url, simtest.TestKey),
		"locked":   adapter(c.primary.url, "sk-not-a-key-the-simulator-takes"),
	}
	if o.tier != "" || o.askTier != "" {
		c.tiered = newUpstreamOn(t, o.tier)
		providers["tiered"] = adapter(c.tiered.url, simtest.TestKey)
		tt := target("tiered", tieredModel)
		tt.PromptCacheTTL, tt.ServiceTier = llm.CacheTTL12h, o.askTier
		routes = append(routes, llm.Route{Name: "tiered", Budget: complBudget, Targets: []llm.Target{tt}})
		o.moreModels = append(o.moreModels, tieredModel)
	}
	r, err := llm.NewRouter(llm.RouterParams{
		Providers:  providers,
		Routes:     routes,
		RetryDelay: complRetryDelay,
		Now:        c.clock.now,
	})
	if err != nil {
		t.Fatal(err)
	}
	c.router = &tracedRouter{Router: r}
	c.fixture = newFixture(t, o)
	mux := http.NewServeMux()
	user := func(h httpx.HandlerFunc) http.Handler {
		return httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
			p := auth.Principal{UserID: r.Header.Get("X-Test-User"), Plan: r.Header.Get("X-Test-Plan")}
			return h(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
		})
	}
	mux.Handle("POST /v1/chat/completions", user(c.svc.HandleCompletions))
	mux.Handle("GET /v1/models", user(c.svc.HandleModels))
	mux.Handle("GET /v1/models/{id}", user(c.svc.HandleModel))
	ts := httptest.NewUnstartedServer(mux)
	ts.Config.Protocols = testkit.BothProtocols()
	ts.Start()
	t.Cleanup(ts.Close)
	c.gateway = ts.URL
	if c.prices, err = billing.DefaultPrices(); err != nil {
		t.Fatal(err)
	}
	return c
}

// client is openai-go, unchanged, pointed at the gateway as user (and
// plan). Its retries are off, so each call is one request.
func (c *complFixture) client(user, plan string) *openai.Client {
	opts := []option.RequestOption{option.WithBaseURL(c.gateway + "/v1/"), option.WithAPIKey("a-user-jwt"),
		option.WithMaxRetries(0), option.WithHeader("X-Test-User", user)}
	if plan != "" {
		opts = append(opts, option.WithHeader("X-Test-Plan", plan))
	}
	cl := openai.NewClient(opts...)
	return &cl
}

// records are user's ledger records, oldest first.
func (c *complFixture) records(t testing.TB, user string) []billing.Record {
	t.Helper()
	rows, err := c.pool.Query(context.Background(), `SELECT kind, session_id, turn_id, provider, model,
		text_in, text_cached_in, text_out, cost_micros, usage_source FROM usage_records WHERE user_id = $1 ORDER BY id`, user)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []billing.Record
	for rows.Next() {
		var r billing.Record
		if err := rows.Scan(&r.Kind, &r.SessionID, &r.TurnID, &r.Provider, &r.Model,
			&r.Usage.TextIn, &r.Usage.TextCachedIn, &r.Usage.TextOut, &r.CostMicros, &r.UsageSource); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// cost is what the price table makes of usage of model.
func (c *complFixture) cost(t testing.TB, model string, u billing.Usage) int64 {
	t.Helper()
	v, err := c.prices.Cost(billing.Line{Model: model, Usage: u})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func userMsg(text string) openai.ChatCompletionMessageParamUnion { return openai.UserMessage(text) }

// complClock is the breakers' clock: the real time, moved on by a test
// that needs minutes to pass (a breaker's open window) in no time.
type complClock struct {
	mu    sync.Mutex
	ahead time.Duration
}

func (k *complClock) now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return time.Now().Add(k.ahead)
}

func (k *complClock) advance(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ahead += d
}

// tracedRouter is the fixture's router keeping every call's failover
// trace, as /v1/chat's audit row does: a completion stores none.
type tracedRouter struct {
	*llm.Router
	mu     sync.Mutex
	traces [][]string
}

func (r *tracedRouter) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	st, err := r.Router.Stream(ctx, req)
	if err != nil {
		r.keep(nil, err)
		return nil, err
	}
	return &keptStream{Stream: st, r: r}, nil
}

// keep notes the trace that ended a call: its EventDone's, or its
// RouteError's.
func (r *tracedRouter) keep(done llm.Trace, err error) {
	var re *llm.RouteError
	if err != nil && !errors.As(err, &re) {
		return // the caller's own end (it left): no route outcome
	}
	if re != nil {
		done = re.Trace
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traces = append(r.traces, done.Strings())
}

// trace is the nth call's trace (from 0), nil before it ended.
func (r *tracedRouter) trace(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n >= len(r.traces) {
		return nil
	}
	return r.traces[n]
}

// keptStream passes a routed stream on, noting the trace it ends with.
type keptStream struct {
	llm.Stream
	r     *tracedRouter
	ended bool
}

// Answering passes the router stream's own on: the endpoint names the
// committed target from it.
func (s *keptStream) Answering() llm.Target {
	return s.Stream.(interface{ Answering() llm.Target }).Answering()
}

func (s *keptStream) Next(ctx context.Context) (llm.Event, error) {
	ev, err := s.Stream.Next(ctx)
	if !s.ended && (err != nil || ev.Kind == llm.EventDone) {
		s.ended = true
		s.r.keep(ev.Trace, err)
	}
	return ev, err
}
