package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// mint signs a test token with the gateway's test secret.
func mint(t *testing.T, sub, role, plan string) string {
	t.Helper()
	tok, err := auth.Mint(auth.MintParams{Secret: []byte(testSecret), Subject: sub, Role: role, Plan: plan, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// call makes one request and returns its status, Retry-After and body.
func call(t *testing.T, method, url, tok string, body io.Reader) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// errorCode is the code of a DESIGN §5 error body, or "".
func errorCode(body string) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}

// The route table and openapi.json describe the same routes.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	m, _ := startMain(t, pgtest.URL(t), nil)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	status, _, body := call(t, "GET", m.URL()+"/openapi.json", "", nil)
	if err := json.Unmarshal([]byte(body), &doc); status != 200 || err != nil {
		t.Fatalf("GET /openapi.json: got %d, %v", status, err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi: got %q, want 3.1.0", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	for _, p := range m.Server.Patterns() {
		if !documented[p] {
			t.Errorf("route %q is not in openapi.json", p)
		}
		delete(documented, p)
	}
	for p := range documented {
		t.Errorf("openapi.json documents %q, which is not a route", p)
	}
}

// The domain routes through the real table: who may call each, and what
// they answer.
func TestDomainRoutes(t *testing.T) {
	t.Parallel()
	m, logs := startMain(t, pgtest.URL(t), func(c *config.Config) { c.Demo.Enabled = true })
	base := m.URL()

	t.Run("me", func(t *testing.T) {
		cases := []struct {
			name, tok  string
			wantStatus int
			want       string
		}{
			{"plain user", mint(t, "u1", "", "pro"), 200, `"user_id":"u1","role":"user","plan":"pro"`},
			{"unknown plan claim falls back to the default", mint(t, "u2", "", "gold"), 200, `"user_id":"u2","role":"user","plan":"free"`},
			{"admin", mint(t, "a1", "admin", ""), 200, `"user_id":"a1","role":"admin","plan":"free"`},
			{"no token", "", 401, "UNAUTHORIZED"},
			{"garbage token", "garbage", 401, "UNAUTHORIZED"},
		}
		for _, tc := range cases {
			status, _, body := call(t, "GET", base+"/v1/me", tc.tok, nil)
			if status != tc.wantStatus {
				t.Fatalf("%s: status: got %d, want %d (%s)", tc.name, status, tc.wantStatus, body)
			}
			if tc.wantStatus != 200 {
				if got := errorCode(body); got != tc.want {
					t.Fatalf("%s: code: got %s, want %s", tc.name, got, tc.want)
				}
				continue
			}
			if !strings.Contains(body, tc.want) || !strings.Contains(body, `"requests_per_minute":{"used":`) {
				t.Fatalf("%s: body: got %s, want %s and a usage report", tc.name, body, tc.want)
			}
		}
	})

	t.Run("plan", func(t *testing.T) {
		cases := []struct {
			name, role, body string
			wantStatus       int
			wantCode         string
		}{
			{"admin", "admin", `{"plan":"pro"}`, 200, ""},
			{"finance", "finance", `{"plan":"pro"}`, 403, "FORBIDDEN"},
			{"user", "", `{"plan":"pro"}`, 403, "FORBIDDEN"},
			{"unknown plan", "admin", `{"plan":"gold"}`, 422, "VALIDATION_ERROR"},
			{"bad json", "admin", `{"plan":`, 400, "INVALID_REQUEST"},
		}
		for _, tc := range cases {
			status, _, body := call(t, "PUT", base+"/v1/admin/users/target-user/plan", mint(t, "op", tc.role, ""), strings.NewReader(tc.body))
			if status != tc.wantStatus || errorCode(body) != tc.wantCode {
				t.Fatalf("%s: got %d %s, want %d %s", tc.name, status, body, tc.wantStatus, tc.wantCode)
			}
		}
		// The admin's change shows on the user's next request.
		if _, _, body := call(t, "GET", base+"/v1/me", mint(t, "target-user", "", "free"), nil); !strings.Contains(body, `"plan":"pro"`) {
			t.Fatalf("/v1/me after the change: got %s, want plan pro", body)
		}
	})

	t.Run("tools", func(t *testing.T) {
		tok := mint(t, "u", "", "")
		status, _, body := call(t, "GET", base+"/v1/tools?voice=true", tok, nil)
		if status != 200 || !strings.Contains(body, `"search_recipes"`) || strings.Contains(body, `"log_meal"`) {
			t.Fatalf("voice tools: got %d %s, want search_recipes and no log_meal", status, body)
		}
		status, _, body = call(t, "GET", base+"/v1/tools", tok, nil)
		if status != 200 || !strings.Contains(body, `"log_meal"`) {
			t.Fatalf("all tools: got %d %s, want log_meal listed", status, body)
		}
		if status, _, body := call(t, "GET", base+"/v1/tools?voice=maybe", tok, nil); status != 400 {
			t.Fatalf("bad voice flag: got %d %s, want 400", status, body)
		}
	})

	t.Run("access log", func(t *testing.T) {
		tok := mint(t, "u-log", "", "")
		if status, _, _ := call(t, "GET", base+"/v1/me", tok, nil); status != 200 {
			t.Fatalf("status %d", status)
		}
		l := logs.String()
		if !strings.Contains(l, `"route":"GET /v1/me"`) || !strings.Contains(l, `"user_id":"u-log"`) {
			t.Fatalf("access log lacks route or user: %s", l)
		}
		if strings.Contains(l, tok) || strings.Contains(l, strings.Split(tok, ".")[2]) {
			t.Fatal("access log contains the token")
		}
	})
}

// Without a provider key, voice and chat are off: every one of their
// routes, reading and deleting included, answers 503 AI_FEATURE_DISABLED
// with Retry-After and names the feature; the rest of the API runs.
func TestOffFeatureRoutes(t *testing.T) {
	t.Parallel()
	m, _ := startMain(t, pgtest.URL(t), nil)
	tok := mint(t, "alice", "", "pro")
	cases := []struct {
		name, method, path, feature string
	}{
		{"voice action", "POST", "/v1/voice", "Voice"},
		{"voice start", "POST", "/v1/voice/sessions", "Voice"},
		{"voice list", "GET", "/v1/voice/sessions", "Voice"},
		{"voice get", "GET", "/v1/voice/sessions/s1", "Voice"},
		{"voice tool call", "POST", "/v1/voice/sessions/s1/tool-calls", "Voice"},
		{"voice sdp", "POST", "/v1/voice/sessions/s1/sdp", "Voice"},
		{"voice end", "POST", "/v1/voice/sessions/s1/end", "Voice"},
		{"chat turn", "POST", "/v1/chat", "Chat"},
		{"chat list", "GET", "/v1/chat/sessions", "Chat"},
		{"chat messages", "GET", "/v1/chat/sessions/s1/messages", "Chat"},
		{"chat delete", "DELETE", "/v1/chat/sessions/s1", "Chat"},
		{"completions", "POST", "/v1/chat/completions", "Chat"},
		{"models", "GET", "/v1/models", "Chat"},
		{"model", "GET", "/v1/models/m", "Chat"},
		{"responses create", "POST", "/v1/responses", "Chat"},
		{"responses get", "GET", "/v1/responses/resp_1", "Chat"},
		{"responses delete", "DELETE", "/v1/responses/resp_1", "Chat"},
		{"responses input items", "GET", "/v1/responses/resp_1/input_items", "Chat"},
	}
	for _, tc := range cases {
		status, retry, body := call(t, tc.method, m.URL()+tc.path, tok, strings.NewReader(`{}`))
		if status != 503 || errorCode(body) != "AI_FEATURE_DISABLED" || retry == "" {
			t.Errorf("%s: got %d %q %s, want 503 AI_FEATURE_DISABLED with Retry-After", tc.name, status, retry, body)
		}
		if want := tc.feature + " is not set up"; !strings.Contains(body, want) {
			t.Errorf("%s: got %s, want a message saying %q", tc.name, body, want)
		}
	}
	if status, _, body := call(t, "GET", m.URL()+"/v1/me", tok, nil); status != 200 {
		t.Errorf("GET /v1/me: got %d %s, want 200", status, body)
	}
}
