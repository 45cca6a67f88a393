package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var secret = []byte("welltrack-test-secret-0123456789")

func sign(body string, at time.Time) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "." + body))
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

func post(s *Server, path, body, sig string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("X-Voxgate-Signature", sig)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// Only signed calls, to a tool the server has, under its own name, run.
func TestServerRefuses(t *testing.T) {
	s := New(secret)
	body := `{"call_id":"c1","user_id":"u1","name":"recommend_workouts","arguments":{"available_time_minutes":30}}`
	cases := []struct {
		name, path, body, sig string
		want                  int
	}{
		{"signed", "/hooks/recommend_workouts", body, sign(body, time.Now()), 200},
		{"unsigned", "/hooks/recommend_workouts", body, "", 401},
		{"tampered", "/hooks/recommend_workouts", body + " ", sign(body, time.Now()), 401},
		{"old", "/hooks/recommend_workouts", body, sign(body, time.Now().Add(-301*time.Second)), 401},
		{"another tool's path", "/hooks/log_event_suggestion", body, sign(body, time.Now()), 400},
		{"unknown tool", "/hooks/delete_everything", body, sign(body, time.Now()), 404},
	}
	for _, c := range cases {
		if got := post(s, c.path, c.body, c.sig).Code; got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

// The context is the profile and then the sources in the seed's priority
// order, cut where the budget ends; never raw daily values.
func TestContextBudget(t *testing.T) {
	full := buildContext("u1", ContextBudgetTokens)
	for _, k := range []string{"goals", "health_summary_7d", "plan_adherence", "nutrition_3d", "ai_memory", "recovery_today"} {
		if _, ok := full[k]; !ok {
			t.Errorf("full context lacks %s", k)
		}
	}
	if b, _ := json.Marshal(full); strings.Contains(string(b), "6.5,") || tokens(full) > ContextBudgetTokens {
		t.Errorf("full context holds raw values or is over budget: %s", b)
	}
	profileOnly := tokens(map[string]any{"language": "en", "units": "metric", "diet": "gluten-free", "allergies": []string{"dairy"},
		"goals": []string{"improve_sleep", "reduce_stress"}, "profile": map[string]any{"age": 34, "weight_kg": 68.0, "height_cm": 165.0}})
	small := buildContext("u1", profileOnly+40)
	if _, ok := small["health_summary_7d"]; !ok || small["trimmed"] != true {
		t.Errorf("a small budget keeps the highest priority source and says it trimmed: %v", small)
	}
	if _, ok := small["recovery_today"]; ok {
		t.Errorf("a small budget kept the lowest priority source: %v", small)
	}
}

// Any signed body, to any tool, gets an answer and never a panic: a
// refusal is a 4xx, an answer is JSON.
func FuzzServer(f *testing.F) {
	f.Add(uint8(0), `{"call_id":"c","user_id":"u","name":"recommend_workouts","arguments":{"available_time_minutes":30}}`)
	f.Add(uint8(1), `{"user_id":"u","name":"generate_weekly_plan","arguments":{"start_date":"2026-02-30"}}`)
	f.Add(uint8(2), `{"user_id":"u","name":"extract_recipe_from_url","arguments":[1]}`)
	s := New(secret)
	names := slices.Sorted(maps.Keys(s.tools))
	f.Fuzz(func(t *testing.T, tool uint8, body string) {
		// The path is the tool's name; the body may name any tool.
		w := post(s, "/hooks/"+names[int(tool)%len(names)], body, sign(body, time.Now()))
		if w.Code == 200 && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("200 with a body that is not JSON: %q", w.Body.String())
		}
		if w.Code != 200 && (w.Code < 400 || w.Code > 499) {
			t.Fatalf("status %d", w.Code)
		}
	})
}
