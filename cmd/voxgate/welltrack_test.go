package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/examples/welltrack/hooks"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const welltrackSecret = "welltrack-hook-secret-0123456789"

// welltrackCalls are the scripted arguments of each of the eleven
// workflows, as the app's screens would prompt them.
var welltrackCalls = map[string]map[string]any{
	"generate_weekly_plan": {"start_date": "2026-02-16", "goals": []string{"improve_sleep", "reduce_stress"},
		"constraints": map[string]any{"max_workout_minutes": 45}},
	"generate_pantry_recipes": {"pantry_items": []string{"chicken", "broccoli", "rice", "onion", "garlic"},
		"storage_location": map[string]any{"chicken": "fridge", "rice": "cupboard"}, "meal_type": "dinner"},
	"generate_recipe_steps": {"recipe_id": "r-1", "recipe_title": "Garlic Chicken Stir-Fry",
		"ingredients": []string{"chicken breast", "broccoli", "garlic", "tamari"}},
	"summarize_insights":        {"period": "week", "start_date": "2026-02-08", "end_date": "2026-02-14"},
	"recommend_supplements":     {"goals": []string{"improve_sleep"}, "current_supplements": []string{"vitamin_d", "magnesium"}},
	"recommend_workouts":        {"recovery_score": 62, "available_time_minutes": 30, "equipment": []string{"bodyweight", "dumbbells"}},
	"update_goals":              {"goal_id": "g-protein", "target_protein_g": 110, "reason": "Supporting muscle recovery"},
	"recalc_goal_forecast":      {"goal_id": "g-sleep"},
	"log_event_suggestion":      {"time_of_day": "evening", "last_logged": "lunch"},
	"extract_recipe_from_url":   {"url": "https://example.com/recipe"},
	"extract_recipe_from_image": {"image_url": "https://storage.example.com/card.jpg"},
}

// welltrackScript answers each workflow's message (its name) with that
// tool's call, and every tool result with a suggestive sentence; three
// messages script what the guardrails must catch.
func welltrackScript() sim.Script {
	var rules []sim.Rule
	for name, args := range welltrackCalls {
		rules = append(rules, sim.Rule{Name: name, When: sim.When{Contains: []string{"workflow " + name}, ToolResults: boolp(false)},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: name, Arguments: args}}}})
	}
	return sim.Script{Rules: append(rules,
		sim.Rule{Name: "weight", When: sim.When{Contains: []string{"goal weight"}, ToolResults: boolp(false)},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "update_goals",
				Arguments: map[string]any{"goal_id": "g-weight", "target_weight_kg": 731.5, "reason": "typo"}}}}},
		sim.Rule{Name: "claim", When: sim.When{Contains: []string{"sleep trouble"}},
			Reply: sim.Reply{Text: "Based on your data, rest matters. Magnesium treats insomnia. Take it nightly."}},
		sim.Rule{Name: "tone", When: sim.When{Contains: []string{"water"}},
			Reply: sim.Reply{Text: "You should drink more water with lunch."}},
		sim.Rule{Name: "answer", When: sim.When{ToolResults: boolp(true)},
			Reply: sim.Reply{Text: "Based on your data, one option could be to start small this week."}},
		sim.Rule{Name: "hello", When: sim.When{}, Reply: sim.Reply{Text: "Hi! You might consider a short walk today."}},
	)}
}

// hookServer runs an example's own tool server in process and counts the
// calls each path gets.
type hookServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newHookServer(t *testing.T, h http.Handler) *hookServer {
	t.Helper()
	s := &hookServer{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hookServer) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// loadExample loads examples/<name>/voxgate.yaml and points its webhooks
// from the documented address at the in-process tool server.
func loadExample(t *testing.T, name, documented, hookURL string) *config.Config {
	t.Helper()
	c, err := config.Load("../../examples/"+name+"/voxgate.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range c.Tools.Webhooks {
		if !strings.HasPrefix(w.URL, documented) {
			t.Fatalf("webhook %s: URL %s is not on the documented %s", w.Name, w.URL, documented)
		}
		c.Tools.Webhooks[i].URL = hookURL + strings.TrimPrefix(w.URL, documented)
	}
	return c
}

// startExample starts a gateway with an example's sections of cfg, the
// simulator at simURL and env as the environment its webhooks read.
func startExample(t *testing.T, ex *config.Config, simURL string, env map[string]string, mutate func(*config.Config)) *Main {
	t.Helper()
	getenv := func(k string) string {
		if k == "VOXGATE_DATABASE_URL" {
			return env[k]
		}
		return map[string]string{"VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0"}[k]
	}
	cfg, err := config.Load("", getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns, cfg.Database.SpoolDir = 4, t.TempDir()
	cfg.Quota, cfg.Tools, cfg.Chat = ex.Quota, ex.Tools, ex.Chat
	cfg.Voice.ContextTool, cfg.Voice.ContextCacheTTL = ex.Voice.ContextTool, ex.Voice.ContextCacheTTL
	cfg.Providers, cfg.Routes = ex.Providers, ex.Routes
	cfg.Secrets.OpenAIAPIKey, cfg.Secrets.OpenAIBaseURL = simtest.TestKey, simURL+"/v1"
	if mutate != nil {
		mutate(cfg)
	}
	m := &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{}), Getenv: func(k string) string { return env[k] }}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// chatJSON posts a non-streamed turn and decodes the answer.
func chatJSON(t *testing.T, url, tok string, body map[string]any) (int, http.Header, map[string]any) {
	t.Helper()
	body["stream"] = false
	b, _ := json.Marshal(body)
	resp := postChat(t, context.Background(), url, tok, string(b))
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer %d is not JSON: %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, out
}

// The WellTrack example end to end: its configuration, its own tool
// server, the simulator and PostgreSQL. Each workflow runs through
// POST /v1/chat with `workflow`, in dry run as the README starts it.
func TestWelltrackExample(t *testing.T) {
	t.Parallel()
	hs := newHookServer(t, hooks.New([]byte(welltrackSecret)))
	ex := loadExample(t, "welltrack", "http://127.0.0.1:8091", hs.URL)
	up := newUpstream(t, sim.Config{Script: welltrackScript()})
	m := startExample(t, ex, up.url, map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t),
		"WELLTRACK_HOOK_SECRET": welltrackSecret}, func(c *config.Config) { c.DryRun = true })
	pro := mint(t, "wt-pro", "", "pro")

	// What the app reads from each workflow's answer: a card with the tool
	// server's structured result (reads), or the dry-run proposals (writes).
	reads := map[string]func(map[string]any) bool{
		"generate_pantry_recipes": func(d map[string]any) bool { return len(d["recipes"].([]any)) >= 5 },
		"recommend_supplements":   func(d map[string]any) bool { return len(d["supplements"].([]any)) > 0 },
		"recommend_workouts":      func(d map[string]any) bool { return len(d["workouts"].([]any)) > 0 },
		"log_event_suggestion":    func(d map[string]any) bool { return d["action_type"] == "log_meal" },
	}
	kinds := map[string]string{"generate_pantry_recipes": "recipes", "recommend_supplements": "supplements",
		"recommend_workouts": "workouts", "log_event_suggestion": "log_suggestion"}
	for name, args := range welltrackCalls {
		status, _, r := chatJSON(t, m.URL(), pro, map[string]any{"message": "workflow " + name, "workflow": name})
		if status != 200 || r["degraded"] != false || !strings.Contains(r["message"].(string), "Based on your data") {
			t.Fatalf("%s: %d %v", name, status, r)
		}
		tool := ex.Tools.Webhooks[webhookIndex(t, ex, name)]
		if check, isRead := reads[name]; isRead {
			cards := r["cards"].([]any)
			if len(cards) != 1 || cards[0].(map[string]any)["kind"] != kinds[name] ||
				!check(cards[0].(map[string]any)["data"].(map[string]any)) || hs.hit("/hooks/"+name) != 1 {
				t.Errorf("%s: cards %v, hook hit %d times", name, cards, hs.hit("/hooks/"+name))
			}
			continue
		}
		writes := r["db_writes"].([]any)
		if len(writes) != len(tool.WritesTo) || hs.hit("/hooks/"+name) != 0 {
			t.Fatalf("%s: db_writes %v for %v; hook hit %d times in dry run", name, writes, tool.WritesTo, hs.hit("/hooks/"+name))
		}
		for i, w := range writes {
			w := w.(map[string]any)
			got, _ := json.Marshal(w["data"])
			want, _ := json.Marshal(args)
			if w["table"] != tool.WritesTo[i] || w["dry_run"] != true || string(got) != string(want) {
				t.Errorf("%s: write %d is %v, want %s of %s, dry run", name, i, w, tool.WritesTo[i], want)
			}
		}
	}
	// The context tool ran once for the user's eleven turns
	// (voice.context_cache_ttl), and its profile reached the model.
	if n := hs.hit("/hooks/get_context"); n != 1 || ex.Voice.ContextCacheTTL != 5*time.Minute {
		t.Errorf("context tool called %d times in eleven turns (TTL %s), want 1", n, ex.Voice.ContextCacheTTL)
	}
	if bodies, _ := up.calls(); !strings.Contains(string(bodies[len(bodies)-1]), `gluten-free`) {
		t.Error("the model never saw the context's profile")
	}

	t.Run("unsafe weight", func(t *testing.T) {
		status, _, r := chatJSON(t, m.URL(), pro, map[string]any{"message": "set my goal weight to 731.5"})
		flags, _ := json.Marshal(r["safety_flags"])
		if status != 200 || !strings.Contains(string(flags), `"type":"unsafe_value"`) || !strings.Contains(string(flags), `"blocked":true`) ||
			len(r["db_writes"].([]any)) != 0 || hs.hit("/hooks/update_goals") != 0 {
			t.Fatalf("%d flags %s writes %v", status, flags, r["db_writes"])
		}
	})
	t.Run("medical claim", func(t *testing.T) {
		status, _, r := chatJSON(t, m.URL(), pro, map[string]any{"message": "I have sleep trouble"})
		flags, _ := json.Marshal(r["safety_flags"])
		msg := r["message"].(string)
		if status != 200 || strings.Contains(msg, "treats") || strings.Contains(msg, "nightly") ||
			!strings.HasSuffix(msg, "please consult a healthcare provider for medical advice.") ||
			!strings.Contains(string(flags), `"type":"medical_claim"`) {
			t.Fatalf("%d %q flags %s", status, msg, flags)
		}
	})
	t.Run("prescriptive tone", func(t *testing.T) {
		status, _, r := chatJSON(t, m.URL(), pro, map[string]any{"message": "how much water?"})
		flags, _ := json.Marshal(r["safety_flags"])
		if status != 200 || !strings.Contains(string(flags), `"type":"prescriptive_tone"`) || !strings.Contains(string(flags), `"blocked":false`) {
			t.Fatalf("%d flags %s", status, flags)
		}
	})
	t.Run("free plan", func(t *testing.T) {
		free := mint(t, "wt-free", "", "free")
		for i := 1; i <= 3; i++ {
			status, _, r := chatJSON(t, m.URL(), free, map[string]any{"message": "hello"})
			u := r["usage"].(map[string]any)
			if status != 200 || u["plan"] != "free" || u["calls_used_today"] != float64(i) || u["calls_remaining_today"] != float64(3-i) ||
				u["tokens_remaining_today"].(float64) >= 10000 {
				t.Fatalf("call %d: %d usage %v", i, status, u)
			}
		}
		status, h, r := chatJSON(t, m.URL(), free, map[string]any{"message": "hello"})
		e, _ := r["error"].(map[string]any)
		midnight := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		if status != 429 || e["code"] != "RATE_LIMITED" || e["limit"] != "requests_per_day" || h.Get("Retry-After") == "" ||
			e["message"] != ex.Quota.Plans["free"].Messages["requests_per_day"] || !strings.Contains(e["message"].(string), "Daily AI usage limit reached") {
			t.Fatalf("fourth call: %d %v; want the plan's message", status, r)
		}
		if at, err := time.Parse(time.RFC3339, e["resets_at"].(string)); err != nil || !at.Equal(midnight) {
			t.Fatalf("resets_at %v, want %s", e["resets_at"], midnight)
		}
	})
}

func webhookIndex(t *testing.T, c *config.Config, name string) int {
	t.Helper()
	for i, w := range c.Tools.Webhooks {
		if w.Name == name {
			return i
		}
	}
	t.Fatalf("no webhook %s", name)
	return -1
}
