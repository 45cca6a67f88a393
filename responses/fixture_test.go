package responses_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/gemini"
	llmopenai "github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/responses"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/unit"
)

const (
	model         = "gpt-4.1-mini"
	helloAnswer   = "Hello there."
	weatherAnswer = "It is sunny in Paris."
	// claimAnswer has a medical claim the output filter blocks.
	// leakEmail is personal data the output filter fails an answer for.
	leakEmail   = "coach.mike@gymmail.example.com"
	claimAnswer = "Oats are a great breakfast. Add berries for colour. Turmeric cures arthritis, so add a pinch. Then enjoy it warm."
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// script is the simulator's: a greeting, a weather call and its answer,
// and a claim to block.
func script() sim.Script {
	return sim.Script{Text: helloAnswer, Rules: []sim.Rule{
		{Name: "weather", When: sim.When{Contains: []string{"weather"}, ToolResults: no()},
			Reply: sim.Reply{Text: "Checking. ", ToolCalls: []sim.ScriptCall{{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}}}},
		{Name: "weathered", When: sim.When{Contains: []string{"weather"}, ToolResults: yes()}, Reply: sim.Reply{Text: weatherAnswer}},
		{Name: "email", When: sim.When{Contains: []string{"coach"}},
			Reply: sim.Reply{Text: "Sure. Your coach is at " + leakEmail + " for questions. Happy training."}},
		{Name: "claim", When: sim.When{Contains: []string{"breakfast"}}, Reply: sim.Reply{Text: claimAnswer}},
	}}
}

// fixture is one replica's responses service over a database and a
// simulator, serving the endpoints with the caller named by X-Test-User.
type fixture struct {
	svc     *responses.Service
	g       testgraph.Graph
	gateway string
	prices  *billing.Prices
}

type options struct {
	// share is another fixture whose database and simulator this replica
	// uses: two replicas of one deployment.
	share *fixture
}

func newFixture(t testing.TB, o options) *fixture {
	t.Helper()
	q := testgraph.OpenQuota()
	free := q.Plans["free"]
	free.Routes = []string{"chat", "gem"}
	q.Plans["free"] = free
	go_ := testgraph.Options{SimConfig: sim.Config{Latency: simtest.ZeroLatency(), Keys: []string{simtest.TestKey},
		ShutdownDates: map[string]string{}, Script: script()}, Quota: q}
	if o.share != nil {
		go_.DBURL, go_.Sim, go_.SimURL = o.share.g.DBURL, o.share.g.Sim, o.share.g.SimURL
	}
	g := testgraph.NewGraph(t, go_)
	adapter, err := llmopenai.New(llmopenai.Params{BaseURL: g.SimURL + "/v1", APIKey: simtest.TestKey})
	if err != nil {
		t.Fatal(err)
	}
	gem, err := gemini.New(t.Context(), gemini.Params{Name: "gemini", BaseURL: g.SimURL, APIKey: simtest.TestKey})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultChat()
	// "premium" is a route no plan of the open quota lists for free users;
	// "gem" one whose only target is Gemini.
	router, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"openai": adapter, "gemini": gem},
		Routes: []llm.Route{{Name: "chat", Budget: 10 * time.Second, Targets: []llm.Target{{Provider: "openai", Model: model}}},
			{Name: "premium", Budget: 10 * time.Second, Targets: []llm.Target{{Provider: "openai", Model: model}}},
			{Name: "gem", Budget: 10 * time.Second, Targets: []llm.Target{{Provider: "gemini", Model: "gemini-3.8-flash"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	log := testkit.Quiet()
	sp, err := spool.New(spool.Params{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	env := &unit.Env{Pool: g.Pool, Quota: g.Quota, Provider: router, Ledger: g.Ledger, Audit: audit.New(g.Pool), Spool: sp, Log: log}
	svc, err := responses.New(responses.Params{Env: env, Models: []string{model}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	user := func(h httpx.HandlerFunc) http.Handler {
		return httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
			p := auth.Principal{UserID: r.Header.Get("X-Test-User"), Plan: r.Header.Get("X-Test-Plan")}
			return h(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
		})
	}
	mux.Handle("POST /v1/responses", user(svc.HandleCreate))
	mux.Handle("GET /v1/responses/{id}", user(svc.HandleGet))
	mux.Handle("GET /v1/responses/{id}/input_items", user(svc.HandleInputItems))
	mux.Handle("DELETE /v1/responses/{id}", user(svc.HandleDelete))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	prices, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, g: g, gateway: ts.URL, prices: prices}
}

// client is openai-go, unchanged, pointed at the gateway as user. Its
// retries are off, so each call is one request.
func (f *fixture) client(user string) *openai.Client {
	cl := openai.NewClient(option.WithBaseURL(f.gateway+"/v1/"), option.WithAPIKey("a-user-jwt"),
		option.WithMaxRetries(0), option.WithHeader("X-Test-User", user))
	return &cl
}

// records are user's ledger records, oldest first.
func (f *fixture) records(t testing.TB, user string) []billing.Record {
	t.Helper()
	rows, err := f.g.Pool.Query(context.Background(), `SELECT kind, session_id, model, text_in, text_cached_in, text_out,
		coalesce(cost_micros, -1) FROM usage_records WHERE user_id = $1 ORDER BY id`, user)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []billing.Record
	for rows.Next() {
		var r billing.Record
		var cost int64
		if err := rows.Scan(&r.Kind, &r.SessionID, &r.Model, &r.Usage.TextIn, &r.Usage.TextCachedIn, &r.Usage.TextOut, &cost); err != nil {
			t.Fatal(err)
		}
		r.CostMicros = &cost
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	return testgraph.Count(t, f.g.Pool, sql, args...)
}
