package quota

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
)

// TestHandleMe drives GET /v1/me as the route table would, with the
// principal the authentication middleware puts in the context.
func TestHandleMe(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), config.DefaultQuota(), newClock(t0))
	tests := []struct {
		name       string
		p          *auth.Principal // nil: no principal
		wantStatus int
		wantRole   string
		wantPlan   string
		wantErr    apierr.Code
	}{
		{"plain user", &auth.Principal{Plan: "pro"}, 200, "user", "pro", ""},
		{"unknown plan claim falls back to the default", &auth.Principal{Plan: "gold"}, 200, "user", "free", ""},
		{"admin", &auth.Principal{Role: auth.RoleAdmin}, 200, "admin", "free", ""},
		{"no principal", nil, 401, "", "", apierr.Unauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, "/v1/me", nil)
			var id string
			if tc.p != nil {
				p := *tc.p
				p.UserID = user(t).UserID
				id = p.UserID
				req = req.WithContext(auth.WithPrincipal(req.Context(), p))
			}
			rec := httptest.NewRecorder()
			httpx.Handle(s.HandleMe).ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("got status %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			var body struct {
				UserID string                    `json:"user_id"`
				Role   string                    `json:"role"`
				Plan   string                    `json:"plan"`
				Usage  map[string]map[string]any `json:"usage"`
				Error  struct {
					Code apierr.Code `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Code != tc.wantErr {
				t.Fatalf("got error code %q, want %q", body.Error.Code, tc.wantErr)
			}
			if tc.wantStatus != 200 {
				return
			}
			if body.UserID != id || body.Role != tc.wantRole || body.Plan != tc.wantPlan {
				t.Errorf("got %s, want user_id %s role %s plan %s", rec.Body, id, tc.wantRole, tc.wantPlan)
			}
			if len(body.Usage) != 9 {
				t.Errorf("got %d limits in usage, want 9: %s", len(body.Usage), rec.Body)
			}
			perMinute := body.Usage[ReasonMinute]
			if perMinute["used"] != float64(0) || perMinute["limit"] == nil {
				t.Errorf("usage.%s: got %v, want used 0 and a limit", ReasonMinute, perMinute)
			}
		})
	}
}

// TestHandleMeUnlimitedIsNull: an unlimited limit reads "limit": null and
// "remaining": null on the wire, never 0, which config refuses as a limit
// (DESIGN §9); a finite one reads its number.
func TestHandleMeUnlimitedIsNull(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), config.DefaultQuota(), newClock(t0))
	p := user(t)
	p.Plan = "free"
	req := httptest.NewRequest(http.MethodGet, "/v1/me", nil)
	req = req.WithContext(auth.WithPrincipal(req.Context(), p))
	rec := httptest.NewRecorder()
	httpx.Handle(s.HandleMe).ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("got status %d, want 200: %s", rec.Code, rec.Body)
	}
	var body struct {
		Usage map[string]map[string]json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, limit, wantLimit, wantRemaining string
	}{
		{"unlimited calls per day", ReasonCalls, "null", "null"},
		{"finite requests per minute", ReasonMinute, "3", "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, ok := body.Usage[tc.limit]
			if !ok {
				t.Fatalf("usage.%s missing: %s", tc.limit, rec.Body)
			}
			if got := string(u["limit"]); got != tc.wantLimit {
				t.Errorf("usage.%s.limit: got %s, want %s", tc.limit, got, tc.wantLimit)
			}
			if got := string(u["remaining"]); got != tc.wantRemaining {
				t.Errorf("usage.%s.remaining: got %s, want %s", tc.limit, got, tc.wantRemaining)
			}
		})
	}
}
