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

var secret = []byte("yummy-test-secret-0123456789")

// post sends body to path, signed now.
func post(s *Server, path, body string) *httptest.ResponseRecorder {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "." + body))
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("X-Voxgate-Signature", "t="+ts+",v1="+hex.EncodeToString(mac.Sum(nil)))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// call posts a signed call of tool for user and decodes the answer.
func call(t *testing.T, s *Server, user, tool, args string) (int, map[string]any) {
	t.Helper()
	body := `{"call_id":"c-` + strconv.Itoa(len(s.Log())) + `","user_id":"` + user + `","session_id":"s1","name":"` + tool + `","arguments":` + args + `}`
	w := post(s, "/hooks/"+tool, body)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func titles(out map[string]any) []string {
	var ts []string
	for _, r := range out["recipes"].([]any) {
		ts = append(ts, r.(map[string]any)["title"].(string))
	}
	return ts
}

// A search matches title, cuisine or ingredient, keeps to the time asked,
// and never returns a recipe holding the user's allergen; the log keeps
// every call with its user and session.
func TestSearch(t *testing.T) {
	t.Parallel()
	s := New(secret)
	cases := []struct {
		name, user, args string
		want             string
	}{
		{"pasta", "u1", `{"query":"pasta"}`, "Lemon Pasta with Peas|Pasta al Pomodoro|Creamy Mushroom Pasta|Pesto Pasta Salad"},
		{"quick pasta", "u1", `{"query":"pasta","max_time_minutes":20}`, "Lemon Pasta with Peas|Pesto Pasta Salad"},
		{"thai", "u1", `{"query":"thai"}`, "Peanut Noodle Bowl|Satay Chicken Skewers"},
		{"thai, allergic to peanuts", "nut-1", `{"query":"thai"}`, ""},
		{"nothing", "u1", `{"query":"durian"}`, ""},
		{"a limit", "u1", `{"query":"pasta","limit":1}`, "Lemon Pasta with Peas"},
	}
	for _, c := range cases {
		code, out := call(t, s, c.user, "search_recipes", c.args)
		if got := strings.Join(titles(out), "|"); code != 200 || got != c.want {
			t.Errorf("%s: %d %q, want %q", c.name, code, got, c.want)
		}
	}
	if log := s.Log(); len(log) != len(cases) || log[3].UserID != "nut-1" || log[3].Name != "search_recipes" || log[3].SessionID != "s1" {
		t.Errorf("log %+v", log)
	}
}

// An allergy the allergen map does not know fails closed: no recipes,
// and no recipe generated.
func TestSearchFailsClosed(t *testing.T) {
	t.Parallel()
	s := New(secret)
	if code, out := call(t, s, "kiwi-1", "search_recipes", `{"query":"pasta"}`); code != 200 || len(titles(out)) != 0 || out["note"] != "allergen check unavailable" {
		t.Fatalf("search: %d %v", code, out)
	}
	if code, _ := call(t, s, "kiwi-1", "generate_custom_recipe", `{"ingredients":["pasta"]}`); code != 422 {
		t.Fatalf("generate: %d", code)
	}
}

// A generated recipe is in the user's units, refused when it holds the
// user's allergen, and found again only by its owner.
func TestCustomRecipes(t *testing.T) {
	t.Parallel()
	s := New(secret)
	code, r := call(t, s, "es-1", "generate_custom_recipe", `{"ingredients":["chicken","rice"],"target_time_minutes":25}`)
	ings, _ := json.Marshal(r["ingredients"])
	if code != 200 || r["id"] != "cr-1" || r["name"] != "Chicken Skillet" || r["measurement_system"] != "metric" || !strings.Contains(string(ings), `"unit":"g"`) {
		t.Fatalf("generate: %d %v", code, r)
	}
	if code, _ := call(t, s, "nut-1", "generate_custom_recipe", `{"ingredients":["peanut butter","noodles"]}`); code != 422 {
		t.Fatalf("a peanut recipe for a peanut allergy: %d", code)
	}
	if code, got := call(t, s, "es-1", "retrieve_custom_recipe", `{"query":"chicken"}`); code != 200 || got["id"] != "cr-1" {
		t.Fatalf("retrieve by name: %d %v", code, got)
	}
	if code, _ := call(t, s, "u2", "retrieve_custom_recipe", `{"recipe_id":"cr-1"}`); code != 422 {
		t.Fatalf("another user's recipe: %d", code)
	}
}

// Only signed calls, to a tool the server has, under its own name, run.
func TestServerRefuses(t *testing.T) {
	t.Parallel()
	s := New(secret)
	body := `{"call_id":"c1","user_id":"u1","name":"search_recipes","arguments":{"query":"pasta"}}`
	for _, c := range []struct {
		name, path, sig string
		want            int
	}{
		{"unsigned", "/hooks/search_recipes", "", 401},
		{"another tool's path", "/hooks/retrieve_custom_recipe", "sign", 400},
		{"unknown tool", "/hooks/drop_tables", "sign", 404},
	} {
		w := httptest.NewRecorder()
		if c.sig == "" {
			s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(body)))
		} else {
			w = post(s, c.path, body)
		}
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
	}
	if n := len(s.Log()); n != 0 {
		t.Errorf("%d refused calls logged", n)
	}
}

// Any signed body, to any tool, gets an answer and never a panic: a
// refusal is a 4xx, an answer is JSON.
func FuzzServer(f *testing.F) {
	f.Add(uint8(0), `{"call_id":"c","user_id":"u","name":"search_recipes","arguments":{"query":"pasta"}}`)
	f.Add(uint8(1), `{"user_id":"nut-1","name":"generate_custom_recipe","arguments":{"ingredients":[]}}`)
	f.Add(uint8(2), `{"user_id":"u","name":"retrieve_custom_recipe","arguments":[1]}`)
	s := New(secret)
	names := slices.Sorted(maps.Keys(s.tools))
	f.Fuzz(func(t *testing.T, tool uint8, body string) {
		w := post(s, "/hooks/"+names[int(tool)%len(names)], body)
		if w.Code == 200 && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("200 with a body that is not JSON: %q", w.Body.String())
		}
		if w.Code != 200 && (w.Code < 400 || w.Code > 499) {
			t.Fatalf("status %d", w.Code)
		}
	})
}
