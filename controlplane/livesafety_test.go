package controlplane_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// auditRow is one ai_audit_log row's judged fields.
type auditRow struct {
	status       string
	ran, ruleIDs []string
}

// sessionAudit reads the session's audit rows of kind.
func sessionAudit(t *testing.T, ctx context.Context, f fixture, sessionID, kind string) []auditRow {
	t.Helper()
	rows, err := f.pool.Query(ctx, `SELECT status, filters_ran, rule_ids FROM ai_audit_log
		WHERE session_id = $1 AND kind = $2 ORDER BY created_at`, sessionID, kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		if err := rows.Scan(&r.status, &r.ran, &r.ruleIDs); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// settledDelegation waits for the session's one delegation audit row to
// leave pending.
func settledDelegation(t *testing.T, ctx context.Context, f fixture, sessionID string) auditRow {
	t.Helper()
	var rows []auditRow
	testkit.Eventually(t, ctx, "the delegation's audit row settled", func() bool {
		rows = sessionAudit(t, ctx, f, sessionID, "live_delegation")
		return len(rows) == 1 && rows[0].status != "pending"
	})
	return rows[0]
}

// ranAll says the row names every filter a delegation's success needs.
func ranAll(r auditRow) bool {
	for _, f := range []string{"input", "medical", "prescriptive", "pii"} {
		if !slices.Contains(r.ran, f) {
			return false
		}
	}
	return true
}

// waitAppended waits for the session's first append of type typ.
func waitAppended(t *testing.T, ctx context.Context, f fixture, liveID, typ string) sim.LiveApplied {
	t.Helper()
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "a "+typ, func() bool {
		st, _ = f.sim.LiveSession(liveID)
		return len(appended(st, typ)) > 0
	})
	return appended(st, typ)[0]
}

// The backend's answer holds a medical claim after a first good sentence:
// the voice gets the sentence and the fallback, never the claim, in the
// answer's language (English or Spanish) when the session names none, and
// in the session's when it does; the delegation's audit row says
// medical_claim_blocked with the rule and every filter that ran, and the
// session carries a blocked flag. A session the app names no language for
// takes the profile's: a short Spanish claim with no Spanish stopword
// ("Cúrcuma cura artritis.") reads as no language alone, and was answered
// in English.
func TestLiveDelegationAnswerScreened(t *testing.T) {
	t.Parallel()
	const en, enClaim = "Try the lemon pasta with peas tonight. ", "Turmeric cures arthritis, so add a spoon."
	const es = "Prueba la pasta con limón y guisantes esta noche. "
	for _, tc := range []struct{ name, profile, session, first, claim, fallback, rule string }{
		{"en", "", "", en, enClaim, safety.Fallback, safety.RuleCure},
		{"es", "", "", es, "La cúrcuma cura la artritis, así que añade una cucharada.", safety.FallbackES, safety.RuleDiseaseClaim},
		{"an English answer in a Spanish session", "", "es", en, enClaim, safety.FallbackES, safety.RuleCure},
		{"a Spanish profile and no session language", "es-MX", "", es, "Cúrcuma cura artritis.", safety.FallbackES, safety.RuleDiseaseClaim},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			delegationAnswerScreened(t, tc.profile, tc.session, tc.first, tc.claim, tc.fallback, tc.rule)
		})
	}
}

func delegationAnswerScreened(t *testing.T, profile, language, first, claim, fallback, rule string) {
	reg := prometheus.NewRegistry()
	no, yes := false, true
	script := sim.Script{Rules: []sim.Rule{
		{When: sim.When{Contains: []string{"pasta"}, ToolResults: &no},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "echo", Arguments: map[string]any{"q": "pasta"}}}}},
		{When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: first + claim}},
	}}
	f := newFixture(t, options{registry: reg, backend: "gpt-4.1-mini", simCfg: oneTurn(script, simtest.ZeroLatency()),
		profileLanguage: profile})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, start, liveID := askLiveIn(t, ctx, f, language)
	if c := waitAppended(t, ctx, f, liveID, "session.commentary.append").Content; c != first+fallback {
		t.Fatalf("commentary %q; want the first sentence and the fallback", c)
	}
	if r := settledDelegation(t, ctx, f, start.SessionID); r.status != "medical_claim_blocked" || !ranAll(r) ||
		!slices.Contains(r.ruleIDs, rule) {
		t.Fatalf("delegation row %+v; want medical_claim_blocked, every filter, rule %s", r, rule)
	}
	got := decode[controlplane.Session](t, call(t, f.svc.HandleGet, p, "GET", "/", nil, start.SessionID))
	if len(got.SafetyFlags) != 1 || got.SafetyFlags[0].Type != safety.MedicalClaim || !got.SafetyFlags[0].Blocked {
		t.Fatalf("session flags %+v", got.SafetyFlags)
	}
	if n := counter(t, reg, "answered"); n != 1 {
		t.Fatalf("%v answered; want 1 (the fallback was said)", n)
	}
}

// The backend's answer holds an e-mail address: nothing of it is said
// (the voice is told the task could not be done), the row says pii_leak,
// and the delegation counts as blocked.
func TestLiveDelegationAnswerLeakNotSaid(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	script := sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"pasta"}},
		Reply: sim.Reply{Text: "I sent the recipe to alice.secret@example.com for you."}}}}
	f := newFixture(t, options{registry: reg, backend: "gpt-4.1-mini", simCfg: oneTurn(script, simtest.ZeroLatency())})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, start, liveID := askLive(t, ctx, f)
	waitAppended(t, ctx, f, liveID, "session.instructions.append")
	if r := settledDelegation(t, ctx, f, start.SessionID); r.status != "pii_leak" || !ranAll(r) || len(r.ruleIDs) == 0 {
		t.Fatalf("delegation row %+v; want pii_leak with its rule", r)
	}
	if st, _ := f.sim.LiveSession(liveID); len(appended(st, "session.commentary.append")) != 0 {
		t.Fatalf("commentary %+v; want none", appended(st, "session.commentary.append"))
	}
	if counter(t, reg, "blocked") != 1 || counter(t, reg, "answered") != 0 {
		t.Fatalf("blocked %v, answered %v; want 1, 0", counter(t, reg, "blocked"), counter(t, reg, "answered"))
	}
}

// What the voice model says itself passes the detectors after the fact, as
// a sideband call's transcripts do: a claim it speaks is flagged on the
// session and audited (voice_answer, flagged) once the line is over.
func TestLiveSpokenAnswerFlagged(t *testing.T) {
	t.Parallel()
	cfg := oneTurn(sim.Script{}, simtest.ZeroLatency())
	cfg.Live.Rules = []sim.LiveRule{{When: sim.When{Contains: []string{"pasta"}},
		Reply: sim.LiveReply{Text: "Turmeric cures arthritis, so add a spoon to your pasta."}}}
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: cfg})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, start, liveID := askLive(t, ctx, f)
	testkit.Eventually(t, ctx, "the voice's own answer", func() bool {
		st, _ := f.sim.LiveSession(liveID)
		return slices.ContainsFunc(st.Transcript, func(l sim.LiveLine) bool { return l.Speaker == "model" })
	})
	endLive(t, ctx, f, p, start.SessionID, liveID)
	// The voice's last line is screened as its holder finishes the call,
	// which follows the provider's close the end waited for: wait for the
	// row (a CI run under load read the log in between).
	var rows []auditRow
	testkit.Eventually(t, ctx, "the spoken answer's audit row", func() bool {
		rows = sessionAudit(t, ctx, f, start.SessionID, "voice_answer")
		return len(rows) > 0
	})
	if len(rows) != 1 || rows[0].status != "flagged" || !slices.Contains(rows[0].ruleIDs, safety.RuleCure) {
		t.Fatalf("voice_answer rows %+v; want one flagged with the cure rule", rows)
	}
	got := decode[controlplane.Session](t, call(t, f.svc.HandleGet, p, "GET", "/", nil, start.SessionID))
	if len(got.SafetyFlags) != 1 || got.SafetyFlags[0].Type != safety.MedicalClaim || got.SafetyFlags[0].Blocked ||
		strings.Contains(got.SafetyFlags[0].Message, "Turmeric") {
		t.Fatalf("session flags %+v", got.SafetyFlags)
	}
}
