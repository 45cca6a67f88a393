package safety

import (
	"slices"
	"strings"
	"testing"
)

// fixedJudge answers every sentence the same, and counts what it was asked.
type fixedJudge struct {
	claim, ok bool
	asked     []string
}

func (j *fixedJudge) Judge(sentence, _ string) (bool, bool) {
	j.asked = append(j.asked, sentence)
	return j.claim, j.ok
}

// bandSentences picks corpus sentences by where the model scores them:
// unsure (inside the default band) or sure (outside it), below or above
// the threshold.
func bandSentences(t *testing.T) (unsureBelow, unsureAbove, sureBelow, sureAbove string) {
	th := claimModel.threshold
	for _, r := range readCorpus(t) {
		if r.label == "pii" {
			continue
		}
		c := scoreClaim(normal(r.text), r.lang)
		if !c.gated {
			continue
		}
		switch d := c.score - th; {
		case d < 0 && d >= -DefaultJudgeBand && unsureBelow == "":
			unsureBelow = r.text
		case d >= 0 && d < DefaultJudgeBand && unsureAbove == "":
			unsureAbove = r.text
		case d < -3*DefaultJudgeBand && sureBelow == "":
			sureBelow = r.text
		case d >= 3*DefaultJudgeBand && sureAbove == "":
			sureAbove = r.text
		}
	}
	if unsureBelow == "" || unsureAbove == "" || sureBelow == "" || sureAbove == "" {
		t.Fatal("the corpus has no sentence for some band")
	}
	return
}

func TestJudgeDecidesOnlyUnsureSentences(t *testing.T) {
	t.Parallel()
	unsureBelow, unsureAbove, sureBelow, sureAbove := bandSentences(t)

	// A judge that calls everything a claim blocks an unsure sentence the
	// model passed, with its own rule id, and is never asked about the
	// sure ones or a sentence without a risk word.
	yes := &fixedJudge{claim: true, ok: true}
	v := CheckText(unsureBelow, Options{Judge: yes})
	if v.Outcome != Blocked || len(v.Rules) != 1 || v.Rules[0] != RuleClaimJudge {
		t.Errorf("unsure, below the threshold, judge says claim: %v %v, want Blocked [%s]", v.Outcome, v.Rules, RuleClaimJudge)
	}
	if len(v.Judged) != 1 || v.Judged[0] != (Judgement{Model: false, Answered: true, Claim: true}) {
		t.Errorf("judged = %+v", v.Judged)
	}
	yes.asked = nil
	for _, s := range []string{sureBelow, "Preheat the oven to 200 °C and line a tray."} {
		if v := CheckText(s, Options{Judge: yes}); v.Outcome != Pass {
			t.Errorf("%q: %v, want Pass (the judge is not asked)", s, v.Outcome)
		}
	}
	if len(yes.asked) != 0 {
		t.Errorf("the judge was asked about sure sentences: %q", yes.asked)
	}

	// A judge that clears everything lets an unsure claim pass, never a
	// sure one.
	no := &fixedJudge{claim: false, ok: true}
	if v := CheckText(unsureAbove, Options{Judge: no}); v.Outcome != Pass || !slices.Contains(v.Rules, RuleJudgeCleared) {
		t.Errorf("unsure, above the threshold, judge says no claim: %v %v, want Pass with %s", v.Outcome, v.Rules, RuleJudgeCleared)
	}
	if v := CheckText(sureAbove, Options{Judge: no}); v.Outcome != Blocked {
		t.Errorf("sure claim: %v, want Blocked whatever the judge says", v.Outcome)
	}
	if len(no.asked) != 1 {
		t.Errorf("the judge was asked %d times, want 1", len(no.asked))
	}

	// A judge with no answer leaves the model's verdict standing.
	silent := &fixedJudge{ok: false}
	for _, s := range []string{unsureBelow, unsureAbove} {
		want := CheckText(s, Options{})
		got := CheckText(s, Options{Judge: silent})
		if got.Outcome != want.Outcome || !slices.Equal(slices.DeleteFunc(slices.Clone(got.Rules), func(r string) bool { return r == RuleJudgeUnanswered }), want.Rules) ||
			!slices.Contains(got.Rules, RuleJudgeUnanswered) {
			t.Errorf("%q: with a silent judge %v %v, without %v %v", s, got.Outcome, got.Rules, want.Outcome, want.Rules)
		}
		if len(got.Judged) != 1 || got.Judged[0].Answered {
			t.Errorf("%q: judged = %+v, want one unanswered", s, got.Judged)
		}
	}
}

// TestJudgeStreamedEqualsWhole: with a judge, a streamed answer asks the
// same sentences and gets the same verdict as the whole text.
func TestJudgeStreamedEqualsWhole(t *testing.T) {
	t.Parallel()
	unsureBelow, unsureAbove, sureBelow, _ := bandSentences(t)
	answer := sureBelow + " " + unsureAbove + " " + unsureBelow
	for _, claim := range []bool{true, false} {
		whole := &fixedJudge{claim: claim, ok: true}
		want := CheckText(answer, Options{Judge: whole})
		streamed := &fixedJudge{claim: claim, ok: true}
		f := NewFilter(Options{Judge: streamed})
		var out strings.Builder
		for _, w := range strings.SplitAfter(answer, " ") {
			out.WriteString(f.Write(w))
		}
		out.WriteString(f.Close())
		got := f.Verdict()
		if got.Outcome != want.Outcome || got.Released != want.Released || out.String() != want.Released ||
			strings.Join(streamed.asked, "|") != strings.Join(whole.asked, "|") {
			t.Errorf("judge says %v: streamed %v %q asked %q; whole %v %q asked %q", claim,
				got.Outcome, got.Released, streamed.asked, want.Outcome, want.Released, whole.asked)
		}
	}
}
