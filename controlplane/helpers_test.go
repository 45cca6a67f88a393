package controlplane_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools"
)

// fixture is one replica of the gateway's voice side: its own pool, quota
// service, executor and control plane, over a shared database and sim.
type fixture struct {
	svc    *controlplane.Service
	exec   *tools.Executor
	pool   *pgxpool.Pool
	sim    *sim.Server
	simURL string
	url    string // the database
}

// echo is a voice tool that returns its arguments; private is chat only;
// profile is the context tool, naming language when it is not "".
func testTools(runs *int64, language string) []*tools.Tool {
	obj := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":9000}},"additionalProperties":false}`)
	return []*tools.Tool{
		{Name: "echo", Description: "Echoes its arguments.", Voice: true, Parameters: obj,
			Run: func(_ context.Context, inv tools.Invocation) (tools.Outcome, error) {
				if runs != nil {
					*runs++
				}
				var a map[string]any
				if err := inv.Decode(&a); err != nil {
					return tools.Outcome{}, err
				}
				return tools.Outcome{Data: map[string]any{"args": a}}, nil
			}},
		{Name: "private", Description: "Not for voice.", Parameters: obj,
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) { return tools.Outcome{Data: "x"}, nil }},
		{Name: "profile", Description: "The user's profile.", Voice: true, Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				prof := map[string]any{"display_name": "Alice Secretname", "diet": "vegetarian", "allergies": []string{"peanut"}}
				if language != "" {
					prof["language"] = language
				}
				return tools.Outcome{Data: prof}, nil
			}},
	}
}

type options struct {
	simCfg   sim.Config
	url      string // share a database with another fixture
	sim      *sim.Server
	simURL   string
	configFn func(*config.Voice)
	// noContextTool starts sessions without the profile tool.
	noContextTool bool
	// profileLanguage is the profile's language; "" names none, so a
	// session the app names no language for has none.
	profileLanguage string
	runs            *int64
	poolSize        int32 // default 6
	registry        *prometheus.Registry
	quotaFn         func(*config.Quota)
	// rtTransport, when set, carries the realtime client's requests.
	rtTransport http.RoundTripper
	safetyIDs   safety.Identifiers
	spool       *spool.Spool       // the durable path of ends; nil: none
	clock       controlplane.Clock // the holders'; nil: the system's
	// moreTools join testTools.
	moreTools []*tools.Tool
	// backend is the model live delegations run on, through the OpenAI
	// adapter against the sim; "" gives the service no backend.
	backend string
	// wrapBackend, when set, wraps the backend's provider (benchmarks time
	// the model calls with it).
	wrapBackend func(llm.Provider) llm.Provider
	// relay gives the replica a loopback relay network (relay mode).
	relay bool
	// relayICE, when set, is the relay network's ICE disconnected and
	// failed timeouts (a test of a vanished network waits for both).
	relayICE time.Duration
}

func newFixture(t testing.TB, o options) fixture {
	t.Helper()
	qcfg := testgraph.OpenQuota()
	if o.quotaFn != nil {
		o.quotaFn(&qcfg)
	}
	g := testgraph.NewGraph(t, testgraph.Options{DBURL: o.url, PoolSize: o.poolSize, Sim: o.sim, SimURL: o.simURL,
		SimConfig: o.simCfg, Quota: qcfg, Tools: append(testTools(o.runs, o.profileLanguage), o.moreTools...)})
	noRetry := 0
	rtp := realtime.Params{BaseURL: g.SimURL + "/v1", APIKey: simtest.TestKey, MaxRetries: &noRetry, Timeout: testkit.ProviderTimeout}
	if o.rtTransport != nil {
		rtp.HTTPClient = &http.Client{Transport: o.rtTransport}
	}
	rt, err := realtime.New(rtp)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultVoice()
	if o.configFn != nil {
		o.configFn(&cfg)
	}
	contextTool := "profile"
	if o.noContextTool {
		contextTool = ""
	}
	var metrics prometheus.Registerer
	if o.registry != nil {
		metrics = o.registry
	}
	var relay *realtime.Network
	if o.relay {
		if relay, err = realtime.NewNetwork(realtime.NetworkParams{UDPAddr: "127.0.0.1:0", TCPAddr: "127.0.0.1:0", Loopback: true,
			DisconnectedTimeout: o.relayICE, FailedTimeout: o.relayICE}); err != nil {
			t.Fatal(err)
		}
	}
	params := controlplane.Params{Pool: g.Pool, Quota: g.Quota, Tools: g.Tools, Realtime: rt, Ledger: g.Ledger,
		Spool: o.spool, Config: cfg, ContextTool: contextTool, Logger: testkit.Quiet(), Registerer: metrics, SafetyIDs: o.safetyIDs, Clock: o.clock,
		Relay: relay}
	if o.backend != "" {
		if params.Backend, err = openai.New(openai.Params{BaseURL: g.SimURL + "/v1", APIKey: simtest.TestKey}); err != nil {
			t.Fatal(err)
		}
		params.BackendModel = o.backend
		if o.wrapBackend != nil {
			params.Backend = o.wrapBackend(params.Backend)
		}
	}
	svc, err := controlplane.New(params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return fixture{svc: svc, exec: g.Tools, pool: g.Pool, sim: g.Sim, simURL: g.SimURL, url: g.DBURL}
}

// replica is another gateway replica over f's database and simulator.
func (f fixture) replica(t testing.TB) fixture {
	t.Helper()
	return newFixture(t, options{url: f.url, sim: f.sim, simURL: f.simURL})
}

func newUser(t testing.TB, plan string) auth.Principal {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return auth.Principal{UserID: "u-" + hex.EncodeToString(b), Plan: plan}
}

// call sends one request to h as p, the way the route table would after
// authentication.
func call(t testing.TB, h httpx.HandlerFunc, p auth.Principal, method, target string, body []byte, pathID string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r = r.WithContext(auth.WithPrincipal(r.Context(), p))
	if pathID != "" {
		r.SetPathValue("id", pathID)
	}
	w := httptest.NewRecorder()
	httpx.Handle(h).ServeHTTP(w, r)
	return w
}

type errorBody struct {
	Error struct {
		Code        string `json:"code"`
		Message     string `json:"message"`
		SessionID   string `json:"session_id"`
		RetryAfterS int    `json:"retry_after_s"`
	} `json:"error"`
}

func decode[T any](t testing.TB, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", w.Body, err)
	}
	return v
}

func mustStart(t testing.TB, f fixture, p auth.Principal, body string) controlplane.StartResponse {
	t.Helper()
	w := call(t, f.svc.HandleStart, p, "POST", "/v1/voice/sessions", []byte(body), "")
	if w.Code != http.StatusCreated {
		t.Fatalf("start: %d %s", w.Code, w.Body)
	}
	return decode[controlplane.StartResponse](t, w)
}

// expire moves a session's start and reservation into the past, as if its
// time ran out, on the database's clock.
func expire(t testing.TB, pool *pgxpool.Pool, id string, ago time.Duration) {
	t.Helper()
	ctx := context.Background()
	secs := ago.Seconds()
	if _, err := pool.Exec(ctx, `UPDATE voice_sessions SET started_at = now() - make_interval(secs => max_duration_s + $2),
		expires_at = now() - make_interval(secs => $2) WHERE id = $1`, id, secs); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE quota_voice SET expires_at = now() - make_interval(secs => $2) WHERE session_id = $1`, id, secs); err != nil {
		t.Fatal(err)
	}
}
