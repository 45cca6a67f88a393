package server

import (
	"strings"
	"testing"
)

// The plan route through the real route table: only admins, and an unknown
// plan is 422.
func TestSetPlanRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
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
		t.Run(tc.name, func(t *testing.T) {
			w := f.do(t, "PUT", "/v1/admin/users/target-user/plan", token(t, "op", tc.role, ""), strings.NewReader(tc.body), nil)
			if w.Code != tc.wantStatus {
				t.Fatalf("status: got %d, want %d (%s)", w.Code, tc.wantStatus, w.Body)
			}
			if tc.wantCode != "" && errorCode(t, w) != tc.wantCode {
				t.Fatalf("code: got %s, want %s", w.Body, tc.wantCode)
			}
		})
	}
	// The admin's change shows on the user's next request.
	w := f.do(t, "GET", "/v1/me", token(t, "target-user", "", "free"), nil, nil)
	if !strings.Contains(w.Body.String(), `"plan":"pro"`) {
		t.Fatalf("/v1/me after the change: got %s, want plan pro", w.Body)
	}
}

func TestToolsRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	w := f.do(t, "GET", "/v1/tools?voice=true", token(t, "u", "", ""), nil, nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"search_recipes"`) || strings.Contains(w.Body.String(), `"log_meal"`) {
		t.Fatalf("voice tools: got %d %s, want search_recipes and no log_meal", w.Code, w.Body)
	}
	w = f.do(t, "GET", "/v1/tools", token(t, "u", "", ""), nil, nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"log_meal"`) {
		t.Fatalf("all tools: got %d %s, want log_meal listed", w.Code, w.Body)
	}
	if w := f.do(t, "GET", "/v1/tools?voice=maybe", token(t, "u", "", ""), nil, nil); w.Code != 400 {
		t.Fatalf("bad voice flag: got %d, want 400", w.Code)
	}
}
