package completions_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/sim"
)

// What the simulated model says in these tests (complScript).
const (
	claimAnswer = "Oats are a great breakfast. Add berries for colour. Turmeric cures arthritis, so add a pinch. Then enjoy it warm."
	claimBefore = "Oats are a great breakfast. Add berries for colour. "
	// claimLead is the claim's words before its first risk word ("cures"):
	// a stream releases them before the sentence can turn into a claim
	// (DESIGN §12); a whole answer keeps only the sentences before it.
	claimLead = "Turmeric "
	// A claim in Spanish, written for these tests (not from the corpus).
	claimAnswerES = "La avena es un buen desayuno. La cúrcuma cura la artritis, así que añade una pizca. Disfrútala caliente."
	claimBeforeES = "La avena es un buen desayuno. "
	leakEmail     = "coach.mike@gymmail.example.com"
	// benignRisky is a sentence the claim model passes that holds a risk
	// word, so the filter judges it; with a band of 10 every such
	// sentence is put to the judge.
	benignRisky = "Oats are a good source of fiber for people with diabetes."
)

// A completion's row: pending at admission, then answered, or refused
// with the code the client got.
func TestAuditCompletion(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	got := c.stream(t, "u-ok", "chat", "hello")
	if got.err != nil {
		t.Fatal(got.err)
	}
	r := testgraph.OneAuditRow(t, c.pool, "u-ok")
	if r.Kind != audit.KindCompletion || r.Status != audit.Success || r.ErrorCode != "" || r.FinishedAt == nil {
		t.Errorf("row %+v: want a finished completion, success, no error code", r)
	}
	if r.Route != "chat" || r.Provider != "primary" || r.InputHash == "" || len(r.FailoverTrace) != 1 {
		t.Errorf("row %+v, want route chat answered by primary, an input hash and one attempt", r)
	}
	c.primary.fault(t, sim.Fault{Kind: sim.FaultContentFilter, Fraction: 1})
	if got := c.stream(t, "u-refused", "solo", "hello"); got.err == nil {
		t.Fatal("a content-filter refusal answered")
	}
	r = testgraph.OneAuditRow(t, c.pool, "u-refused")
	if r.Status != audit.Refused || r.ErrorCode != "AI_CONTENT_FILTERED" {
		t.Errorf("row %+v, want refused AI_CONTENT_FILTERED", r)
	}
}

// The audit row records the verdict (DESIGN §12) for completions as for
// chat turns: which filters ran, which rules fired, and the statuses
// success, medical_claim_blocked and pii_leak, streamed and whole.
func TestAuditCompletionSafetyOutcomes(t *testing.T) {
	t.Parallel()
	all := []string{audit.FilterInput, audit.FilterMedical, audit.FilterPrescriptive, audit.FilterPII}
	c := newComplFixture(t)
	for _, tc := range []struct {
		user, message string
		stream        bool
		status        audit.Status
		rules         []string
	}{
		{"c-claim", "ideas for breakfast?", true, audit.MedicalClaimBlocked, []string{safety.RuleCure}},
		{"c-leak", "how do I reach my coach?", true, audit.PIILeak, []string{safety.RuleEmail}},
		{"c-leak-whole", "how do I reach my coach?", false, audit.PIILeak, []string{safety.RuleEmail}},
		{"c-plain", "hello", false, audit.Success, nil},
	} {
		body, _ := json.Marshal(map[string]any{"model": "solo", "stream": tc.stream,
			"messages": []map[string]string{{"role": "user", "content": tc.message}}})
		c.raw(t, tc.user, string(body))
		var r audit.Row
		testkit.Eventually(t, context.Background(), tc.user+"'s final audit row", func() bool {
			rs := testgraph.AuditRows(t, c.pool, tc.user)
			if len(rs) == 1 && rs[0].Status != audit.Pending {
				r = rs[0]
				return true
			}
			return false
		})
		if r.Status != tc.status || !slices.Equal(r.FiltersRan, all) || !slices.Equal(r.RuleIDs, tc.rules) {
			t.Errorf("%s: status %s (%s), filters %v, rules %v; want %s, %v, %v", tc.user, r.Status, r.ErrorCode, r.FiltersRan, r.RuleIDs, tc.status, all, tc.rules)
		}
	}
}

// TestJudgeBlocksThroughCompletions: the same judge on POST
// /v1/chat/completions, streamed and whole, through openai-go: the
// sentence is replaced by the fallback, and the judge's record is the
// operator's, not counted in the user's day.
func TestJudgeBlocksThroughCompletions(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t, func(o *options) {
		o.judge = &judge.Config{Route: "judge", Budget: 5 * time.Second, Band: 10}
	})
	ctx := context.Background()
	resp, err := c.client("u-cjudged", "").Chat.Completions.New(ctx,
		openai.ChatCompletionNewParams{Model: "chat", Messages: ask("tell me about oats")})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; !strings.HasSuffix(got, safety.Fallback) || strings.Contains(got, "diabetes") {
		t.Errorf("whole answer %q: want the sentence replaced by the fallback", got)
	}
	st := c.client("u-cjudged", "").Chat.Completions.NewStreaming(ctx,
		openai.ChatCompletionNewParams{Model: "chat", Messages: ask("tell me about oats")})
	var text strings.Builder
	for st.Next() {
		for _, ch := range st.Current().Choices {
			text.WriteString(ch.Delta.Content)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if got := text.String(); !strings.HasSuffix(got, safety.Fallback) || strings.Contains(got, "diabetes") {
		t.Errorf("streamed answer %q: want the sentence replaced by the fallback", got)
	}
	var judged, completionTokens, dayTokens int64
	if err := c.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM usage_records WHERE user_id = 'u-cjudged' AND kind = 'judge' AND cost_micros > 0),
		(SELECT sum(text_in + text_out) FROM usage_records WHERE user_id = 'u-cjudged' AND kind = 'completion'),
		(SELECT day_tokens FROM quota_users WHERE user_id = 'u-cjudged')`).Scan(&judged, &completionTokens, &dayTokens); err != nil {
		t.Fatal(err)
	}
	if judged != 2 || dayTokens != completionTokens {
		t.Errorf("%d priced judge records (want 2); the day counts %d tokens, the completions %d", judged, dayTokens, completionTokens)
	}
}
