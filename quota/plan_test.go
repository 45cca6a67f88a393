package quota

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
)

// TestPlanResolution: user_plans row → JWT claim → default, and a changed
// row applies to the very next request.
func TestPlanResolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	s := mustService(t, pool, config.DefaultQuota(), newClock(t0))
	tests := []struct {
		name  string
		row   string // "" for no row
		claim string
		want  string
	}{
		{name: "nothing set is the default", want: "free"},
		{name: "claim", claim: "pro", want: "pro"},
		{name: "unknown claim is the default", claim: "gold", want: "free"},
		{name: "row beats claim", row: "free", claim: "pro", want: "free"},
		{name: "row without claim", row: "pro", want: "pro"},
		{name: "row naming a removed plan falls back to the claim", row: "gold", claim: "pro", want: "pro"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := user(t)
			p.Plan = tc.claim
			if tc.row != "" {
				// Written directly: SetPlan refuses plans the config lacks.
				if _, err := pool.Exec(ctx, `INSERT INTO user_plans (user_id, plan) VALUES ($1, $2)`, p.UserID, tc.row); err != nil {
					t.Fatal(err)
				}
			}
			name, plan, err := s.PlanFor(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if name != tc.want || !reflect.DeepEqual(plan, config.DefaultQuota().Plans[tc.want]) {
				t.Errorf("PlanFor: got %s %+v, want %s", name, plan, tc.want)
			}
			if tk := mustAdmit(t, s, p, Estimate{}); tk.Plan != tc.want {
				t.Errorf("Admit: got plan %s, want %s", tk.Plan, tc.want)
			}
			if r, err := s.Report(ctx, p); err != nil || r.Plan != tc.want {
				t.Errorf("Report: got plan %s (%v), want %s", r.Plan, err, tc.want)
			}
		})
	}

	t.Run("change applies to the next request", func(t *testing.T) {
		t.Parallel()
		p := user(t)
		p.Plan = "free"
		tk := mustAdmit(t, s, p, Estimate{})
		if err := tk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetPlan(ctx, p.UserID, "pro"); err != nil {
			t.Fatal(err)
		}
		if tk := mustAdmit(t, s, p, Estimate{}); tk.Plan != "pro" || tk.Limits.ConcurrentTurns != 2 {
			t.Errorf("got plan %s with %d turns, want pro with 2", tk.Plan, tk.Limits.ConcurrentTurns)
		}
	})
}

// TestSetPlanHandler drives PUT /v1/admin/users/{id}/plan as the route
// table would, with a principal in the context.
func TestSetPlanHandler(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), config.DefaultQuota(), newClock(t0))
	tests := []struct {
		name     string
		role     string
		anon     bool
		body     string
		wantCode int
		wantErr  apierr.Code
	}{
		{name: "admin sets a plan", role: auth.RoleAdmin, body: `{"plan":"pro"}`, wantCode: 200},
		{name: "finance is forbidden", role: auth.RoleFinance, body: `{"plan":"pro"}`, wantCode: 403, wantErr: apierr.Forbidden},
		{name: "user is forbidden", role: "", body: `{"plan":"pro"}`, wantCode: 403, wantErr: apierr.Forbidden},
		{name: "no principal", anon: true, body: `{"plan":"pro"}`, wantCode: 401, wantErr: apierr.Unauthorized},
		{name: "unknown plan", role: auth.RoleAdmin, body: `{"plan":"gold"}`, wantCode: 422, wantErr: apierr.Validation},
		{name: "missing plan", role: auth.RoleAdmin, body: `{}`, wantCode: 400, wantErr: apierr.InvalidRequest},
		{name: "unknown field", role: auth.RoleAdmin, body: `{"plan":"pro","x":1}`, wantCode: 400, wantErr: apierr.InvalidRequest},
		{name: "not json", role: auth.RoleAdmin, body: `plan=pro`, wantCode: 400, wantErr: apierr.InvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := user(t).UserID
			req := httptest.NewRequest(http.MethodPut, "/v1/admin/users/"+target+"/plan", strings.NewReader(tc.body))
			req.SetPathValue("id", target)
			if !tc.anon {
				req = req.WithContext(auth.WithPrincipal(req.Context(), auth.Principal{UserID: "caller", Role: tc.role}))
			}
			rec := httptest.NewRecorder()
			httpx.Handle(s.SetPlanHandler).ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("got status %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			var body struct {
				Plan   string `json:"plan"`
				UserID string `json:"user_id"`
				Error  struct {
					Code apierr.Code `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Code != tc.wantErr {
				t.Errorf("got error code %q, want %q", body.Error.Code, tc.wantErr)
			}
			name, _, err := s.PlanFor(context.Background(), auth.Principal{UserID: target})
			if err != nil {
				t.Fatal(err)
			}
			wantPlan := "free" // unchanged
			if tc.wantCode == 200 {
				wantPlan = "pro"
				if body.Plan != "pro" || body.UserID != target {
					t.Errorf("got reply %+v, want plan pro for %s", body, target)
				}
			}
			if name != wantPlan {
				t.Errorf("got plan %s afterwards, want %s", name, wantPlan)
			}
		})
	}
}

// TestSetPlanHandlerPathIDs sends ids through a real route pattern, so the
// mux unescapes them as in production: an id no token could carry is 400
// INVALID_REQUEST and stores nothing.
func TestSetPlanHandlerPathIDs(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	s := mustService(t, pool, config.DefaultQuota(), newClock(t0))
	mux := http.NewServeMux()
	mux.Handle("PUT /v1/admin/users/{id}/plan", httpx.Handle(s.SetPlanHandler))
	tests := []struct {
		name, path string
		wantCode   int
	}{
		{"NUL", "a%00b", 400},
		{"not UTF-8", "%FF", 400},
		{"newline", "a%0Ab", 400},
		{"too long", strings.Repeat("x", 257), 400},
		{"escaped but plain", "user%40example.com", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPut, "/v1/admin/users/"+tc.path+"/plan", strings.NewReader(`{"plan":"pro"}`))
			req = req.WithContext(auth.WithPrincipal(req.Context(), auth.Principal{UserID: "caller", Role: auth.RoleAdmin}))
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("got status %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			if tc.wantCode == 400 && !strings.Contains(rec.Body.String(), string(apierr.InvalidRequest)) {
				t.Errorf("got %s, want %s", rec.Body, apierr.InvalidRequest)
			}
		})
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM user_plans`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("got %d user_plans rows, want 1 (only the plain id)", n)
	}
}
