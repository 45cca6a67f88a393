package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
)

var secret = []byte("server-test-secret-of-at-least-32-bytes")

type fixture struct {
	srv  *Server
	logs *logbuf.Buffer
}

func newFixture(t *testing.T, mutate func(*config.Config)) *fixture {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CORSOrigins = []string{"https://app.example"}
	cfg.Server.MaxBodyBytes = 1024
	if mutate != nil {
		mutate(&cfg)
	}
	v, err := auth.NewVerifier(auth.Params{Secret: secret, CacheSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	logs := &logbuf.Buffer{}
	s, err := New(Params{
		Config: &cfg, Pool: pgtest.Pool(t), Verifier: v,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Registry: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(testRoutes(s))
	return &fixture{srv: s, logs: logs}
}

// testRoutes stands in for the real table (cmd/voxgate/routes.go): one
// route of each kind, with handlers that only report who called.
func testRoutes(s *Server) []Route {
	whoami := func(w http.ResponseWriter, r *http.Request) error {
		p, _ := auth.FromContext(r.Context())
		httpx.WriteJSON(w, http.StatusOK, map[string]string{"user_id": p.UserID, "role": p.Role})
		return nil
	}
	return []Route{
		{Pattern: "GET /healthz", Handler: s.Public(s.Healthz)},
		{Pattern: "GET /readyz", Handler: s.Public(s.Readyz)},
		{Pattern: "GET /metrics", Handler: s.MetricsHandler()},
		{Pattern: "GET /v1/whoami", Handler: s.User(whoami)},
		{Pattern: "GET /v1/admin/x", Handler: s.Admin(whoami)},
		{Pattern: "GET /v1/finance/x", Handler: s.Finance(whoami)},
	}
}

func token(t *testing.T, sub, role, plan string) string {
	t.Helper()
	tok, err := auth.Mint(auth.MintParams{Secret: secret, Subject: sub, Role: role, Plan: plan, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (f *fixture) do(t *testing.T, method, path, tok string, body io.Reader, h http.Handler) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, body)
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	w := httptest.NewRecorder()
	if h == nil {
		h = f.srv
	}
	h.ServeHTTP(w, r)
	return w
}

// errorCode decodes a DESIGN §5 error body.
func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q is not a JSON error: %v", w.Body.String(), err)
	}
	if body.Error.Message == "" || body.Error.RequestID == "" {
		t.Fatalf("error body %s lacks message or request_id", w.Body.String())
	}
	return body.Error.Code
}

func TestUserRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	cases := []struct {
		name, tok  string
		wantStatus int
		want       string
	}{
		{"plain user", token(t, "u1", "", "pro"), 200, `{"role":"","user_id":"u1"}`},
		{"admin", token(t, "a1", "admin", ""), 200, `{"role":"admin","user_id":"a1"}`},
		{"no token", "", 401, "UNAUTHORIZED"},
		{"garbage token", "garbage", 401, "UNAUTHORIZED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := f.do(t, "GET", "/v1/whoami", tc.tok, nil, nil)
			if w.Code != tc.wantStatus {
				t.Fatalf("status: got %d, want %d (%s)", w.Code, tc.wantStatus, w.Body)
			}
			if tc.wantStatus != 200 {
				if got := errorCode(t, w); got != tc.want {
					t.Fatalf("code: got %s, want %s", got, tc.want)
				}
				return
			}
			if got := strings.TrimSpace(w.Body.String()); got != tc.want {
				t.Fatalf("body: got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRoleGates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ok := func(w http.ResponseWriter, r *http.Request) error {
		httpx.WriteJSON(w, 200, map[string]bool{"ok": true})
		return nil
	}
	admin, finance := f.srv.Admin(ok), f.srv.Finance(ok)
	cases := []struct {
		name       string
		h          http.Handler
		role       string
		wantStatus int
	}{
		{"admin on admin route", admin, "admin", 200},
		{"finance on a non-finance admin route", admin, "finance", 403},
		{"user on admin route", admin, "", 403},
		{"finance on finance route", finance, "finance", 200},
		{"admin on finance route", finance, "admin", 200},
		{"user on finance route", finance, "", 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := f.do(t, "GET", "/v1/admin/x", token(t, "u", tc.role, ""), nil, withRequestID(tc.h))
			if w.Code != tc.wantStatus {
				t.Fatalf("status: got %d, want %d", w.Code, tc.wantStatus)
			}
			if tc.wantStatus == 403 && errorCode(t, w) != "FORBIDDEN" {
				t.Fatalf("code: got %s, want FORBIDDEN", w.Body)
			}
		})
	}
}

func TestAIKillSwitch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *config.Config) { c.AIEnabled = false })
	h := withRequestID(f.srv.AI(func(w http.ResponseWriter, r *http.Request) error {
		t.Error("the AI handler ran while AI is disabled")
		return nil
	}))
	w := f.do(t, "POST", "/v1/chat", token(t, "u", "", ""), nil, h)
	if w.Code != 503 || errorCode(t, w) != "AI_FEATURE_DISABLED" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("got %d %s (Retry-After %q), want 503 AI_FEATURE_DISABLED with Retry-After", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
}

func TestMissesAreJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	w := f.do(t, "GET", "/v1/nope", "", nil, nil)
	if w.Code != 404 || errorCode(t, w) != "NOT_FOUND" {
		t.Fatalf("unknown route: got %d %s", w.Code, w.Body)
	}
	w = f.do(t, "POST", "/v1/whoami", "", nil, nil)
	if w.Code != 405 || errorCode(t, w) != "METHOD_NOT_ALLOWED" || !strings.Contains(w.Header().Get("Allow"), "GET") {
		t.Fatalf("wrong method: got %d %s Allow=%q", w.Code, w.Body, w.Header().Get("Allow"))
	}
}

func TestPanicIsA500LoggedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	h := f.srv.middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") }))
	w := f.do(t, "GET", "/x", "", nil, h)
	if w.Code != 500 || errorCode(t, w) != "INTERNAL" {
		t.Fatalf("got %d %s, want 500 INTERNAL", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "kaboom") {
		t.Fatal("the panic value reached the client")
	}
	if n := strings.Count(f.logs.String(), "kaboom"); n != 1 {
		t.Fatalf("panic logged %d times, want once", n)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var readErr error
	h := f.srv.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, readErr = io.ReadAll(r.Body)
	}))
	w := f.do(t, "POST", "/x", "", strings.NewReader(strings.Repeat("a", 2048)), h)
	if w.Code != 413 || errorCode(t, w) != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("declared length over the limit: got %d %s", w.Code, w.Body)
	}
	// A chunked body has no declared length; the reader stops at the limit.
	r := httptest.NewRequest("POST", "/x", io.MultiReader(strings.NewReader(strings.Repeat("a", 2048))))
	r.ContentLength = -1
	h.ServeHTTP(httptest.NewRecorder(), r)
	if !IsBodyTooLarge(readErr) {
		t.Fatalf("chunked body over the limit: got read error %v, want MaxBytesError", readErr)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	pre := func(origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("OPTIONS", "/v1/whoami", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "GET")
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		return w
	}
	w := pre("https://app.example")
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("allowed origin: got %d, ACAO %q", w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	}
	// A web app reads whether to retry, and may send its trace.
	if got := w.Header().Get("Access-Control-Expose-Headers"); !strings.Contains(got, "X-Should-Retry") {
		t.Errorf("exposed headers %q lack X-Should-Retry", got)
	}
	if got := w.Header().Get("Access-Control-Allow-Headers"); !strings.Contains(got, "Traceparent") || !strings.Contains(got, "Tracestate") {
		t.Errorf("allowed headers %q lack the W3C trace context", got)
	}
	if w := pre("https://evil.example"); w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("other origin got ACAO %q", w.Header().Get("Access-Control-Allow-Origin"))
	}
}

func TestAccessLogHasNoSecrets(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tok := token(t, "u-log", "", "")
	w := f.do(t, "GET", "/v1/whoami", tok, nil, nil)
	if w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	logs := f.logs.String()
	if !strings.Contains(logs, `"route":"GET /v1/whoami"`) || !strings.Contains(logs, `"user_id":"u-log"`) {
		t.Fatalf("access log lacks route or user: %s", logs)
	}
	if strings.Contains(logs, tok) || strings.Contains(logs, strings.Split(tok, ".")[2]) {
		t.Fatal("access log contains the token")
	}
}

// withRequestID gives handlers tested outside the middleware a request id,
// as observe would.
func withRequestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(httpx.WithRequestID(r.Context(), "test-req")))
	})
}
