package safety

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The targets of issue #37 and DESIGN §12, held on the corpus's test part
// (docs/safety.md, "The corpus"): phrasings the detector was never
// trained or tuned on. Per language: medical claims (stopping medication
// among them) blocked ≥ 97 %; benign sentences wrongly stopped (blocked,
// or taken for personal data) ≤ 0.5 %; every personal-data sentence of a
// format the rules cover rejected, by the rule for its format.
const (
	targetClaimRecall    = 97.0
	targetFalseBlockRate = 0.5
	targetPIIRecall      = 100.0
)

// reachedClaimRecall and reachedFalseBlockRate are where a language
// misses a target. With the corpus's sixth round (natural sentences
// written by hand, train part only) and the threshold chosen out of fold
// (train_test.go), English blocks 95.82 % of its held-out claims (298 of
// 311) and Spanish 92.02 % (242 of 263); neither language wrongly stops a
// benign sentence (0 of 350, 0 of 394), so both meet that target
// (docs/safety.md). The test part is spent (several models have been
// measured on it): read as a regression guard. Until a language reaches
// a target, the test holds the figure reached, so it cannot get worse
// unnoticed, and logs the gap; issue 37 stays open on it.
var (
	reachedClaimRecall    = map[string]float64{English: 95.8, Spanish: 92.0}
	reachedFalseBlockRate = map[string]float64{}
)

// heldOut tallies one language of one part.
type heldOut struct {
	claims, blocked, benign, falseBlocks, pii, piiCaught int
	misses                                               []string
}

func evaluate(rows []corpusRow, part string, language func(corpusRow) string) map[string]*heldOut {
	out := map[string]*heldOut{English: {}, Spanish: {}}
	for _, r := range rows {
		if r.split != part {
			continue
		}
		h := out[r.lang]
		v := CheckText(r.text, Options{Language: language(r)})
		switch r.label {
		case "claim":
			h.claims++
			if v.Outcome == Blocked {
				h.blocked++
			} else {
				h.misses = append(h.misses, "missed claim: "+r.text)
			}
		case "benign":
			h.benign++
			if v.Outcome != Pass {
				h.falseBlocks++
				h.misses = append(h.misses, fmt.Sprintf("stopped benign %v: %s", v.Rules, r.text))
			}
		case "pii":
			h.pii++
			if v.Outcome == Leak && slices.Contains(v.Rules, "pii."+r.cat) {
				h.piiCaught++
			} else {
				h.misses = append(h.misses, fmt.Sprintf("missed %s %v: %s", r.cat, v.Rules, r.text))
			}
		}
	}
	return out
}

func (h *heldOut) String() string {
	return fmt.Sprintf("claims blocked %d/%d (%.1f %%), benign stopped %d/%d (%.2f %%), PII rejected %d/%d (%.0f %%)",
		h.blocked, h.claims, pct(h.blocked, h.claims), h.falseBlocks, h.benign, pct(h.falseBlocks, h.benign),
		h.piiCaught, h.pii, pct(h.piiCaught, h.pii))
}

// TestHeldOutEvaluation measures the filter on the test part twice: told
// each sentence's language (Options.Language), and left to detect it.
// The dev part, which chose the threshold, is reported beside it.
func TestHeldOutEvaluation(t *testing.T) {
	t.Parallel()
	rows := readCorpus(t)
	modes := []struct {
		name string
		lang func(corpusRow) string
	}{
		{"language given", func(r corpusRow) string { return r.lang }},
		{"language detected", func(corpusRow) string { return "" }},
	}
	for _, m := range modes {
		for _, part := range []string{"dev", "test"} {
			res := evaluate(rows, part, m.lang)
			for _, lang := range []string{English, Spanish} {
				h := res[lang]
				t.Logf("%s, %s, %s: %v", part, m.name, lang, h)
				if part != "test" {
					continue
				}
				if testing.Verbose() {
					t.Logf("  %s", strings.Join(h.misses, "\n  "))
				}
				if h.claims < 100 || h.benign < 100 || h.pii < 10 {
					t.Errorf("%s: the test part has %d claims, %d benign and %d PII sentences; too few to measure", lang, h.claims, h.benign, h.pii)
				}
				recall := targetClaimRecall
				if r, ok := reachedClaimRecall[lang]; ok {
					recall = r
					t.Logf("%s, %s: claims blocked %.2f %%; the target, %.0f %%, is not reached yet", m.name, lang, pct(h.blocked, h.claims), targetClaimRecall)
				}
				if pct(h.blocked, h.claims) < recall {
					t.Errorf("%s, %s: claims blocked %.1f %%, want ≥ %.1f %%", m.name, lang, pct(h.blocked, h.claims), recall)
				}
				fb := targetFalseBlockRate
				if r, ok := reachedFalseBlockRate[lang]; ok {
					fb = r
					t.Logf("%s, %s: benign stopped %.2f %%; the target, %.1f %%, is not reached yet", m.name, lang, pct(h.falseBlocks, h.benign), targetFalseBlockRate)
				}
				if pct(h.falseBlocks, h.benign) > fb {
					t.Errorf("%s, %s: benign stopped %.2f %%, want ≤ %.1f %%", m.name, lang, pct(h.falseBlocks, h.benign), fb)
				}
				if pct(h.piiCaught, h.pii) < targetPIIRecall {
					t.Errorf("%s, %s: PII rejected %.1f %%, want %.0f %%", m.name, lang, pct(h.piiCaught, h.pii), targetPIIRecall)
				}
			}
		}
	}
}

// TestCorpusSize holds the corpus to issue #37's size: at least 3,000
// labelled claim and benign sentences per language, each part holding
// some of every label.
func TestCorpusSize(t *testing.T) {
	t.Parallel()
	n := map[string]int{}
	for _, r := range readCorpus(t) {
		if r.label != "pii" {
			n[r.lang]++
		}
		n[r.split+"/"+r.lang+"/"+r.label]++
	}
	for _, lang := range []string{English, Spanish} {
		if n[lang] < 3000 {
			t.Errorf("%s: %d claim and benign sentences, want ≥ 3000", lang, n[lang])
		}
		for _, part := range []string{"train", "dev", "test"} {
			for _, label := range []string{"claim", "benign", "pii"} {
				if n[part+"/"+lang+"/"+label] == 0 {
					t.Errorf("%s has no %s %s sentences", part, lang, label)
				}
			}
		}
	}
}
