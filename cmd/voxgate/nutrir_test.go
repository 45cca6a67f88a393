package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/examples/nutrir"
	"github.com/voxgate/voxgate/examples/nutrir/hooks"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const nutrirSecret = "nutrir-hook-secret-0123456789"

// nutrirScript plays the model: "this client" is read off the page the
// app names in the system prompt; each write request is one call; after
// tool results it answers naming them.
func nutrirScript() sim.Script {
	no := boolp(false)
	return sim.Script{Rules: []sim.Rule{
		{Name: "this client", When: sim.When{Contains: []string{"this client"}, ToolResults: no,
			SystemMatches: `"entity_id":(\d+),"entity_type":"client"`},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "get_client", Arguments: `{"id": {{system.1}}}`}}}},
		{Name: "cancel", When: sim.When{Contains: []string{"cancel"}, ToolResults: no},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "cancel_appointment", Arguments: map[string]any{"id": 5, "reason": "Client is travelling"}}}}},
		{Name: "deactivate", When: sim.When{Contains: []string{"deactivate"}, ToolResults: no},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "deactivate_staff", Arguments: map[string]any{"staff_id": "nut-2"}}}}},
		{Name: "delete", When: sim.When{Contains: []string{"delete tom"}, ToolResults: no},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "delete_client", Arguments: map[string]any{"id": 4}}}}},
		{Name: "after tools", When: sim.When{ToolResults: boolp(true)}, Reply: sim.Reply{Text: "Noted: {{tool_names}}."}},
		{Name: "hello", When: sim.When{}, Reply: sim.Reply{Text: "How can I help with the practice today?"}},
	}}
}

// The Nutrir example end to end: its configuration, its tool server over
// the practice's tables, the simulator behind Anthropic and OpenAI, and
// two gateway replicas on one PostgreSQL.
func TestNutrirExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Exec(ctx, nutrir.Schema); err != nil {
		t.Fatalf("schema.sql: %v", err)
	}
	hs := newHookServer(t, hooks.New(db, []byte(nutrirSecret)))
	ex := loadExample(t, "nutrir", "http://127.0.0.1:8093", hs.URL)
	if p := ex.Quota.Plans[ex.Quota.DefaultPlan]; p.RequestsPerMinute != 30 || p.RequestsPerDay != 500 {
		t.Fatalf("limits: %+v", p)
	}
	up := newUpstream(t, sim.Config{Script: nutrirScript()})
	env := map[string]string{"VOXGATE_DATABASE_URL": dbURL, "NUTRIR_HOOK_SECRET": nutrirSecret, "ANTHROPIC_API_KEY": simtest.TestKey}
	pointAtSim := func(c *config.Config) {
		for i, p := range c.Providers {
			c.Providers[i].BaseURL = map[string]string{"openai": up.url + "/v1", "anthropic": up.url}[p.Name]
		}
	}
	a := startExample(t, ex, up.url, env, pointAtSim)
	b := startExample(t, ex, up.url, env, pointAtSim)
	admin := mint(t, "dev-user", "", "")
	requests := func(endpoint string) int64 { return up.sim.Stats().Endpoints[endpoint].Requests }
	lastModelCall := func() string { bodies, _ := up.calls(); return string(bodies[len(bodies)-1]) }

	// "this client" is the client of the page the app names in `context`:
	// the same words on two pages read two clients.
	for _, page := range []struct {
		id   int
		name string
	}{{5, "Yuki Tanaka"}, {2, "John Smith"}} {
		status, _, r := chatJSON(t, a.URL(), admin, map[string]any{"message": "When is this client's next appointment?",
			"context": map[string]any{"page": map[string]any{"path": "/clients/" + strconv.Itoa(page.id), "entity_type": "client", "entity_id": page.id}}})
		if status != 200 || r["message"] != "Noted: get_client." {
			t.Fatalf("this client on page %d: %d %v", page.id, status, r)
		}
		var args, resp string
		if err := a.Pool.QueryRow(ctx, `SELECT arguments::text, response FROM tool_calls WHERE session_id = $1 AND tool = 'get_client'`,
			r["session_id"]).Scan(&args, &resp); err != nil {
			t.Fatal(err)
		}
		if args != `{"id": `+strconv.Itoa(page.id)+`}` || !strings.Contains(resp, page.name) {
			t.Errorf("page %d: get_client %s answered %s, want %s", page.id, args, resp, page.name)
		}
		// Per-turn usage, from Anthropic: the record and the answer's block agree.
		u := r["usage"].(map[string]any)
		var provider, model string
		var in, out int64
		if err := a.Pool.QueryRow(ctx, `SELECT provider, model, text_in, text_out FROM usage_records
			WHERE session_id = $1 AND kind = 'chat'`, r["session_id"]).Scan(&provider, &model, &in, &out); err != nil {
			t.Fatal(err)
		}
		if provider != "anthropic" || !strings.HasPrefix(model, "claude-haiku-5-5") || in == 0 || out == 0 ||
			float64(in) != u["input_tokens"] || float64(out) != u["output_tokens"] || u["plan"] != "staff" {
			t.Errorf("usage record %s %s %d/%d, answer's usage %v", provider, model, in, out, u)
		}
	}
	if n := requests("/v1/chat/completions"); requests("/v1/messages") != 4 || n != 0 {
		t.Fatalf("model calls: Anthropic %d, OpenAI %d; want 4 and 0", requests("/v1/messages"), n)
	}

	// A write stops for confirmation on one replica and runs when allowed
	// on the other; the conversation, stored, is the model's history there.
	confirmOnOther := func(t *testing.T, message, tool, tier string, allow bool) (sessionID, callID string, r map[string]any) {
		t.Helper()
		status, _, r := chatJSON(t, a.URL(), admin, map[string]any{"message": message})
		acts, _ := r["actions"].([]any)
		if status != 200 || len(acts) != 1 {
			t.Fatalf("%s: %d %v", message, status, r)
		}
		p := acts[0].(map[string]any)["payload"].(map[string]any)
		if p["name"] != tool || p["tier"] != tier || hs.hit("/hooks/"+tool) != 0 {
			t.Fatalf("%s: confirmation %v, want %s at tier %s; hook hit %d times before it", message, p, tool, tier, hs.hit("/hooks/"+tool))
		}
		sessionID, callID = r["session_id"].(string), p["call_id"].(string)
		status, _, r = chatJSON(t, b.URL(), admin, map[string]any{"session_id": sessionID, "confirm": map[string]any{"call_id": callID, "allow": allow}})
		if status != 200 || r["session_id"] != sessionID || r["message"] != "Noted: "+tool+"." {
			t.Fatalf("%s: the answer on the other replica: %d %v\n%s", message, status, r, lastModelCall())
		}
		if !strings.Contains(lastModelCall(), message) {
			t.Errorf("%s: the model's history on the other replica lacks the user's message", message)
		}
		// Used once: the same confirmation again, on either replica, is 404.
		if status, _, _ := chatJSON(t, a.URL(), admin, map[string]any{"session_id": sessionID,
			"confirm": map[string]any{"call_id": callID, "allow": allow}}); status != 404 {
			t.Errorf("%s: a used confirmation answered %d", message, status)
		}
		return sessionID, callID, r
	}
	audited := func(callID string) (actor, source, entity string) {
		t.Helper()
		if err := db.QueryRow(ctx, `SELECT actor_id, source, entity_type || ':' || entity_id FROM nutrir.audit_log WHERE call_id = $1`,
			callID).Scan(&actor, &source, &entity); err != nil {
			t.Fatalf("audit of %s: %v", callID, err)
		}
		return
	}

	t.Run("standard write", func(t *testing.T) {
		_, callID, _ := confirmOnOther(t, "Please cancel Yuki's appointment tomorrow", "cancel_appointment", "standard", true)
		var status, reason string
		if err := db.QueryRow(ctx, `SELECT status, cancel_reason FROM nutrir.appointments WHERE id = 5`).Scan(&status, &reason); err != nil {
			t.Fatal(err)
		}
		actor, source, entity := audited(callID)
		if status != "cancelled" || reason != "Client is travelling" || hs.hit("/hooks/cancel_appointment") != 1 ||
			actor != "dev-user" || source != "AiAssistant" || entity != "appointment:5" {
			t.Errorf("appointment 5 %s (%s), hook hits %d, audit %s %s %s", status, reason, hs.hit("/hooks/cancel_appointment"), actor, source, entity)
		}
	})
	t.Run("elevated write", func(t *testing.T) {
		_, callID, _ := confirmOnOther(t, "Please deactivate Ines Duarte's account", "deactivate_staff", "elevated", true)
		var active bool
		if err := db.QueryRow(ctx, `SELECT is_active FROM nutrir.staff WHERE id = 'nut-2'`).Scan(&active); err != nil {
			t.Fatal(err)
		}
		if actor, source, entity := audited(callID); active || actor != "dev-user" || source != "AiAssistant" || entity != "staff:nut-2" {
			t.Errorf("nut-2 active %v, audit %s %s %s", active, actor, source, entity)
		}
	})
	t.Run("deny", func(t *testing.T) {
		confirmOnOther(t, "Please delete Tom Becker's record", "delete_client", "standard", false)
		var deleted bool
		if err := db.QueryRow(ctx, `SELECT deleted_at IS NOT NULL FROM nutrir.clients WHERE id = 4`).Scan(&deleted); err != nil {
			t.Fatal(err)
		}
		// The model's next call reads the denial as the call's result.
		if body := lastModelCall(); deleted || hs.hit("/hooks/delete_client") != 0 ||
			!strings.Contains(body, `\"code\":\"denied\"`) || !strings.Contains(body, "tool_result") {
			t.Errorf("deleted %v, hook hits %d; the model's next call:\n%s", deleted, hs.hit("/hooks/delete_client"), body)
		}
	})
	t.Run("elevated write by a nutritionist", func(t *testing.T) {
		// voxgate offers it (tiers are not roles); the app's tool server
		// refuses it, and the model reads why.
		nut := mint(t, "nut-1", "", "")
		_, _, r := chatJSON(t, a.URL(), nut, map[string]any{"message": "deactivate Ines"})
		p := r["actions"].([]any)[0].(map[string]any)["payload"].(map[string]any)
		chatJSON(t, b.URL(), nut, map[string]any{"session_id": r["session_id"], "confirm": map[string]any{"call_id": p["call_id"], "allow": true}})
		if body := lastModelCall(); !strings.Contains(body, "Only a practice admin") {
			t.Errorf("the model did not read the refusal:\n%s", body)
		}
	})

	t.Run("30 a minute", func(t *testing.T) {
		// One user's turns alternate between the replicas; the count is
		// the database's, so the 31st is refused wherever it lands.
		tok := mint(t, "asst-1", "", "")
		// Minutes are fixed, UTC-aligned windows on the database's clock:
		// start early in one, so that the 31 turns (about a second, many
		// more on a loaded machine) share it.
		pgtest.FreshMinute(t, b.Pool, 40*time.Second)
		for i := 1; i <= 31; i++ {
			status, h, r := chatJSON(t, []*Main{a, b}[i%2].URL(), tok, map[string]any{"message": "hello"})
			if i <= 30 {
				if u, _ := r["usage"].(map[string]any); status != 200 || u["calls_used_today"] != float64(i) || u["calls_remaining_today"] != float64(500-i) {
					t.Fatalf("turn %d: %d %v", i, status, r)
				}
				continue
			}
			if e, _ := r["error"].(map[string]any); status != 429 || e["code"] != "RATE_LIMITED" || h.Get("Retry-After") == "" {
				t.Fatalf("turn 31 in a minute: %d %v", status, r)
			}
		}
	})

	// Anthropic down: OpenAI answers the turn.
	before := requests("/v1/chat/completions")
	up.fault(t, sim.Fault{Endpoint: "/v1/messages", Kind: sim.FaultUnavailable, Fraction: 1})
	status, _, r := chatJSON(t, b.URL(), admin, map[string]any{"message": "hello"})
	var provider string
	if err := b.Pool.QueryRow(ctx, `SELECT provider FROM usage_records WHERE session_id = $1 AND kind = 'chat'`, r["session_id"]).Scan(&provider); err != nil {
		t.Fatal(err)
	}
	if status != 200 || r["degraded"] != false || r["message"] != "How can I help with the practice today?" ||
		provider != "openai" || requests("/v1/chat/completions") != before+1 {
		t.Fatalf("Anthropic down: %d %v, answered by %s, OpenAI calls %d", status, r, provider, requests("/v1/chat/completions")-before)
	}
}
