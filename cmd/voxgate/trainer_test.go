package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/examples/trainer/hooks"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const trainerSecret = "trainer-hook-secret-0123456789"

// trainerPlan is a plan as a model would write it: two days of a
// four-week stabilization block.
var trainerPlan = map[string]any{
	"planName": "Stabilization block", "durationWeeks": 4, "summary": "Four weeks of stabilization endurance.",
	"days": []any{
		map[string]any{"dayNumber": 1, "name": "Full body A", "dayType": "training", "estimatedDuration": 45,
			"exercises": []any{
				map[string]any{"name": "Ball squat", "setScheme": "2x15", "restPeriod": 60, "tempo": "4/2/1"},
				map[string]any{"name": "Single-leg balance reach", "setScheme": "2x10", "restPeriod": 45},
			}},
		map[string]any{"dayNumber": 2, "name": "Recovery walk", "dayType": "active_recovery", "exercises": []any{}},
	},
}

// The trainer example end to end: its configuration, its tool server, the
// simulator behind all three providers, PostgreSQL.
func TestTrainerExample(t *testing.T) {
	t.Parallel()
	hs := newHookServer(t, hooks.Handler([]byte(trainerSecret)))
	ex := loadExample(t, "trainer", "http://127.0.0.1:8092", hs.URL)
	if q := ex.Quota; q.GlobalRequestsPerMinute != 30 || q.Plans["free"].RequestsPerMinute != 3 ||
		q.Plans["free"].RequestsPerHour != 20 || q.Plans["free"].ConcurrentTurns != 1 {
		t.Fatalf("limits: %+v", q)
	}
	invalid := map[string]any{"durationWeeks": 4, "summary": "No name.", "days": []any{}} // no planName, no days
	s, ss := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Script: sim.Script{Rules: []sim.Rule{
		{Name: "valid", When: sim.When{Contains: []string{"stabilization"}, ToolResults: boolp(false)},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "draft_workout_plan", Arguments: trainerPlan}}}},
		{Name: "invalid", When: sim.When{Contains: []string{"sloppy"}, ToolResults: boolp(false)},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "draft_workout_plan", Arguments: invalid}}}},
		{Name: "garbled", When: sim.When{Contains: []string{"garbled"}, ToolResults: boolp(false)},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "draft_workout_plan", Arguments: `{"planName": "Block", "days": [`}}}},
		{Name: "done", When: sim.When{ToolResults: boolp(true)}, Reply: sim.Reply{Text: "This plan builds stability first."}},
	}}})
	env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "TRAINER_HOOK_SECRET": trainerSecret,
		"ANTHROPIC_API_KEY": simtest.TestKey, "GEMINI_API_KEY": simtest.TestKey}
	m := startExample(t, ex, ss.URL, env, func(c *config.Config) {
		for i, p := range c.Providers {
			c.Providers[i].BaseURL = map[string]string{"openai": ss.URL + "/v1", "anthropic": ss.URL, "gemini": ss.URL}[p.Name]
		}
	})
	ask := func(user, msg string) (int, map[string]any) {
		status, _, r := chatJSON(t, m.URL(), mint(t, user, "", ""), map[string]any{"message": msg,
			"workflow": "draft_workout_plan", "context": map[string]any{"client": map[string]any{"level": "beginner", "opt_phase": 1}}})
		return status, r
	}
	answeredBy := func(sessionID any) string {
		var p string
		if err := m.Pool.QueryRow(context.Background(), `SELECT provider FROM ai_audit_log WHERE session_id = $1`, sessionID).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A valid plan passes the schema and the app's rule engine; the app
	// gets the draft as a card.
	status, r := ask("coach-1", "A 4-week stabilization plan, please")
	cards, _ := json.Marshal(r["cards"])
	if status != 200 || !strings.Contains(string(cards), `"kind":"workout_plan"`) || !strings.Contains(string(cards), `"planName":"Stabilization block"`) ||
		!strings.Contains(string(cards), `"restPeriod":45`) || hs.hit("/hooks/draft_workout_plan") != 1 || answeredBy(r["session_id"]) != "openai" {
		t.Fatalf("valid plan: %d %v (hook hits %d)", status, r, hs.hit("/hooks/draft_workout_plan"))
	}
	// Output that breaks the plan's schema is the model's invalid output;
	// arguments that are not JSON are its unreadable output. Neither
	// reaches the tool server.
	for _, c := range []struct{ msg, code string }{{"a sloppy plan", "AI_VALIDATION_ERROR"}, {"a garbled plan", "AI_PARSE_ERROR"}} {
		status, r := ask("coach-2", c.msg)
		e, _ := r["error"].(map[string]any)
		if want := map[string]int{"AI_VALIDATION_ERROR": 422, "AI_PARSE_ERROR": 502}[c.code]; status != want || e["code"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.msg, status, r, want, c.code)
		}
	}
	if n := hs.hit("/hooks/draft_workout_plan"); n != 1 {
		t.Errorf("the tool server got %d calls, want only the valid plan's", n)
	}

	// OpenAI down: Anthropic answers; then Anthropic too: Gemini.
	if _, err := s.AddFault(sim.Fault{Endpoint: "/v1/chat/completions", Kind: sim.FaultUnavailable, Fraction: 1}); err != nil {
		t.Fatal(err)
	}
	if status, r := ask("coach-3", "A 4-week stabilization plan, please"); status != 200 || answeredBy(r["session_id"]) != "anthropic" {
		t.Fatalf("OpenAI down: %d, answered by %q: %v", status, answeredBy(r["session_id"]), r)
	}
	if _, err := s.AddFault(sim.Fault{Endpoint: "/v1/messages", Kind: sim.FaultUnavailable, Fraction: 1}); err != nil {
		t.Fatal(err)
	}
	if status, r := ask("coach-4", "A 4-week stabilization plan, please"); status != 200 || answeredBy(r["session_id"]) != "gemini" {
		t.Fatalf("OpenAI and Anthropic down: %d, answered by %q: %v", status, answeredBy(r["session_id"]), r)
	}
	// Every provider down: HTTP 200, degraded, the seed's message and its
	// eight manual templates with their categories; no plan.
	if _, err := s.AddFault(sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1}); err != nil {
		t.Fatal(err)
	}
	status, r = ask("coach-5", "A 4-week stabilization plan, please")
	sugg, _ := json.Marshal(r["suggestions"])
	if status != 200 || r["degraded"] != true || !strings.HasPrefix(r["message"].(string), "AI providers are temporarily unavailable") ||
		len(r["suggestions"].([]any)) != 8 ||
		!strings.Contains(string(sugg), `"category":"OPT","label":"OPT Phase 1: Stabilization Endurance","message":"Use template opt-1-stabilization"`) ||
		!strings.Contains(string(sugg), `"category":"CES","label":"Corrective Exercise Strategy","message":"Use template ces-general"`) ||
		!strings.Contains(string(sugg), `"category":"GENERAL","label":"General Fitness: Intermediate","message":"Use template general-intermediate"`) ||
		len(r["cards"].([]any)) != 0 {
		t.Fatalf("all down: %d %v", status, r)
	}
	var trace string
	if err := m.Pool.QueryRow(context.Background(), `SELECT failover_trace::text FROM ai_audit_log WHERE session_id = $1 AND status = 'degraded'`,
		r["session_id"]).Scan(&trace); err != nil {
		t.Fatal(err)
	}
	o, a, g := strings.Index(trace, "openai/"), strings.Index(trace, "anthropic/"), strings.Index(trace, "gemini/")
	if o < 0 || a < o || g < a {
		t.Errorf("failover trace %s: want openai, then anthropic, then gemini", trace)
	}

	// The kill switch: the same configuration with VOXGATE_AI_ENABLED=false
	// refuses before anything is counted or called.
	off := startExample(t, ex, ss.URL, env, func(c *config.Config) { c.AIEnabled = false })
	before := hs.hit("/hooks/draft_workout_plan")
	status, h, r := chatJSON(t, off.URL(), mint(t, "coach-6", "", ""), map[string]any{"message": "A stabilization plan",
		"workflow": "draft_workout_plan"})
	if e, _ := r["error"].(map[string]any); status != 503 || e["code"] != "AI_FEATURE_DISABLED" || h.Get("Retry-After") == "" ||
		hs.hit("/hooks/draft_workout_plan") != before {
		t.Fatalf("kill switch: %d %v", status, r)
	}
}
