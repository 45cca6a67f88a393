package safety

import "strings"

// A second opinion (issue #37, docs/safety.md "A second opinion"): a
// sentence the claim model scores near its threshold may be put to a
// judge, a model behind the router that the app configures. The judge is
// never required: off by default, and a judge that does not answer in its
// budget leaves the claim model's verdict standing. The package does no
// I/O itself; the judge is the caller's.

// RuleClaimJudge is the rule id of a claim the judge found where the
// claim model alone would have let the sentence pass.
const RuleClaimJudge = "medical.judge"

// The ids a verdict carries for the judge's other outcomes, so the audit
// row shows every question (docs/audit.md): the judge cleared a sentence
// the claim model would have blocked, or gave no answer in its budget
// (the model's verdict stood). Neither blocks anything.
const (
	RuleJudgeCleared    = "medical.judge_cleared"
	RuleJudgeUnanswered = "medical.judge_unanswered"
)

// DefaultJudgeBand is how far from the threshold, in the model's score
// (a logit), a sentence counts as unsure. Out of fold (go test ./safety
// -run TestJudgeBand -cv) ±1.0 holds 10.7 % of the sentences the model
// judges and 154 of its 202 errors.
const DefaultJudgeBand = 1.0

// Judge answers whether a sentence makes a medical claim (docs/safety.md
// says what a claim is), in the sentence's language ("en" or "es"). ok is
// false when it has no answer: an error, a refusal, or its time budget
// spent. A Judge is called from the stream, so it must bound its own
// time; a Filter calls it from one goroutine.
type Judge interface {
	Judge(sentence, language string) (claim, ok bool)
}

// Judgement is one sentence put to the judge, for the audit row: what the
// claim model said, and what the judge said if it answered. No text.
type Judgement struct {
	Model    bool `json:"model_claim"`
	Answered bool `json:"answered"`
	Claim    bool `json:"claim,omitempty"`
}

// decideClaim is the claim verdict of a piece: the model's, or the
// judge's when the model is unsure and the judge answers. The ids are
// those a block reports.
func (f *Filter) decideClaim(window, norm, lang string) []string {
	c := scoreClaim(norm, lang)
	if !c.gated {
		return nil
	}
	th := claimModel.threshold
	model := c.score >= th
	if j := f.opts.Judge; j != nil {
		band := f.opts.JudgeBand
		if band <= 0 {
			band = DefaultJudgeBand
		}
		if c.score >= th-band && c.score < th+band {
			claim, ok := j.Judge(strings.TrimSpace(window), lang)
			f.judged = append(f.judged, Judgement{Model: model, Answered: ok, Claim: ok && claim})
			switch {
			case !ok:
				f.rules = append(f.rules, RuleJudgeUnanswered)
			case claim && !model:
				return []string{RuleClaimJudge}
			case !claim:
				if model {
					f.rules = append(f.rules, RuleJudgeCleared)
				}
				return nil
			}
		}
	}
	if !model {
		return nil
	}
	return c.ids()
}
