package chat_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/sim"
)

// benignRisky is a sentence the claim model passes that holds a risk word,
// so the filter judges it; with a band of 10 every such sentence is put to
// the judge.
const benignRisky = "Oats are a good source of fiber for people with diabetes."

func judgeScript(verdict string) sim.Script {
	return sim.Script{Text: "Hello there.", Rules: []sim.Rule{
		{Name: "judge", When: sim.When{Contains: []string{"Sentence:"}}, Reply: sim.Reply{Text: verdict}},
		{Name: "answer", When: sim.When{Contains: []string{"oats"}}, Reply: sim.Reply{Text: "Sure. " + benignRisky}},
	}}
}

// TestJudgeBlocksThroughChat: a configured judge that calls the sentence a
// claim blocks it on POST /v1/chat: the fallback replaces it, the audit
// row names medical.judge and lists the judge's call, and its usage is a
// record of kind judge under the turn, priced, and not the user's quota.
func TestJudgeBlocksThroughChat(t *testing.T) {
	t.Parallel()
	if v := safety.CheckText(benignRisky, safety.Options{}); v.Outcome != safety.Pass {
		t.Fatalf("without a judge the sentence is %v; the test needs one the model passes", v.Outcome)
	}
	cfg := sim.Config{Script: judgeScript("CLAIM")}
	f := newFixture(t, options{simCfg: &cfg, judge: &judge.Config{Route: "judge", Budget: 5 * time.Second, Band: 10}})
	r := f.post(t, call{user: "u-judged", body: map[string]any{"message": "tell me about oats", "stream": false}})
	if r.Status != 200 {
		t.Fatalf("%d %v", r.Status, r.Body)
	}
	if msg, _ := r.Body["message"].(string); !strings.HasSuffix(msg, safety.Fallback) || strings.Contains(msg, "diabetes") {
		t.Errorf("message %q: want the sentence replaced by the fallback", msg)
	}
	var rules []string
	var trace int
	turnID := ""
	if err := f.pool.QueryRow(context.Background(), `SELECT turn_id, rule_ids, jsonb_array_length(failover_trace)
		FROM ai_audit_log WHERE user_id = 'u-judged' AND kind = 'chat'`).Scan(&turnID, &rules, &trace); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rules, safety.RuleClaimJudge) || trace < 2 {
		t.Errorf("audit row: rules %v, %d trace entries; want %s and the judge's call after the turn's", rules, trace, safety.RuleClaimJudge)
	}
	var judged, chatTokens, dayTokens int64
	if err := f.pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM usage_records WHERE user_id = 'u-judged' AND kind = 'judge'
			AND turn_id = $1 || '/judge/1' AND cost_micros > 0 AND text_in > 0),
		(SELECT sum(text_in + text_out) FROM usage_records WHERE user_id = 'u-judged' AND kind = 'chat'),
		(SELECT day_tokens FROM quota_users WHERE user_id = 'u-judged')`, turnID).Scan(&judged, &chatTokens, &dayTokens); err != nil {
		t.Fatal(err)
	}
	if judged != 1 || dayTokens != chatTokens {
		t.Errorf("%d priced judge records (want 1); the day counts %d tokens, the chat record %d (the judge's are not the user's)", judged, dayTokens, chatTokens)
	}
}

// TestJudgeWithoutAnswerLeavesTheModelsVerdict: a judge whose answer does
// not come within its budget changes nothing the user sees; the audit row
// says it went unanswered.
func TestJudgeWithoutAnswerLeavesTheModelsVerdict(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Script: judgeScript("CLAIM")}
	// A budget no provider call meets, so every question goes unanswered.
	f := newFixture(t, options{simCfg: &cfg, judge: &judge.Config{Route: "judge", Budget: time.Nanosecond, Band: 10}})
	r := f.post(t, call{user: "u-unjudged", body: map[string]any{"message": "tell me about oats", "stream": false}})
	if r.Status != 200 || r.Body["message"] != "Sure. "+benignRisky {
		t.Fatalf("%d %v; want the answer whole", r.Status, r.Body)
	}
	var rules []string
	if err := f.pool.QueryRow(context.Background(), `SELECT rule_ids FROM ai_audit_log
		WHERE user_id = 'u-unjudged' AND kind = 'chat'`).Scan(&rules); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rules, safety.RuleJudgeUnanswered) {
		t.Errorf("rules %v; want %s", rules, safety.RuleJudgeUnanswered)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u-unjudged' AND kind = 'judge'`); n != 0 {
		t.Errorf("%d judge records for questions never answered", n)
	}
}

// TestJudgeScreensToolArguments: a tool call's arguments are put to the
// turn's judge as the answer's sentences are. The sentence passes the claim
// model, so only the judge's CLAIM keeps the call from running; its
// question is a judge record under the turn.
func TestJudgeScreensToolArguments(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Script: sim.Script{Text: "Hello there.", Rules: []sim.Rule{
		{Name: "judge", When: sim.When{Contains: []string{"Sentence:"}}, Reply: sim.Reply{Text: "CLAIM"}},
		{Name: "search", When: sim.When{Contains: []string{"oats"}, ToolResults: no()},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "search_items", Arguments: map[string]any{"q": benignRisky}}}}},
		{Name: "after", When: sim.When{Contains: []string{"oats"}, ToolResults: yes()}, Reply: sim.Reply{Text: "Done."}},
	}}}
	f := newFixture(t, options{simCfg: &cfg, judge: &judge.Config{Route: "judge", Budget: 5 * time.Second, Band: 10}})
	r := f.post(t, call{user: "u-judged-tool", body: map[string]any{"message": "search oats for me", "stream": false}})
	if r.Status != 200 {
		t.Fatalf("%d %v", r.Status, r.Body)
	}
	if n := f.runs.search.Load(); n != 0 {
		t.Errorf("search_items ran %d times; the judge called its arguments a claim", n)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u-judged-tool' AND kind = 'judge'`); n < 1 {
		t.Errorf("%d judge records; want the tool arguments' question recorded under the turn", n)
	}
}
