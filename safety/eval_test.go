package safety

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// evalRow is one labelled sentence of testdata/eval.tsv.
type evalRow struct {
	set, label, name, text string
}

// evalDisplayName is the profile name the unlabelled rows are checked
// with: benign text must not trip the name rule either.
const evalDisplayName = "Dana Whitfield"

func readEval(t *testing.T) []evalRow {
	t.Helper()
	f, err := os.Open("testdata/eval.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []evalRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) != 4 {
			t.Fatalf("eval.tsv: %q has %d columns, want 4", line, len(p))
		}
		r := evalRow{set: p[0], label: p[1], name: p[2], text: p[3]}
		if r.name == "-" {
			r.name = evalDisplayName
		}
		rows = append(rows, r)
	}
	return rows
}

// tally counts one rule's results over a set.
type tally struct{ pos, hit, neg, fp int }

// TestEvaluationSet runs every labelled sentence through CheckText and
// reports recall and false positives per rule, for the part written while
// the rules were shaped (dev), the part written after them (held; its
// first run's misses were then fixed, see docs/safety.md), the part
// written after that and never tuned on (fresh), and all. It holds DESIGN §12's targets on each: medical-claim recall ≥ 95 %
// with false positives ≤ 0.5 %; PII recall ≥ 99 % on emails, phones and
// names; no PII hit on the nutrition and numeric text.
func TestEvaluationSet(t *testing.T) {
	rows := readEval(t)
	if len(rows) < 300 {
		t.Fatalf("the evaluation set has %d sentences, want at least 300", len(rows))
	}
	for _, set := range []string{"dev", "held", "fresh", "all"} {
		rules := map[string]*tally{}
		get := func(id string) *tally {
			if rules[id] == nil {
				rules[id] = &tally{}
			}
			return rules[id]
		}
		var med, pii, medFP, piiFP, negatives, nutrition int
		var medPos, piiPos int
		for _, r := range rows {
			if set != "all" && r.set != set {
				continue
			}
			v := CheckText(r.text, Options{DisplayName: r.name})
			kind, _, _ := strings.Cut(r.label, ".")
			switch kind {
			case "medical":
				medPos++
				tl := get(r.label)
				tl.pos++
				if v.Outcome == Blocked {
					med++
				} else if set == "all" {
					t.Logf("missed %s: %q (%v)", r.label, r.text, v.Rules)
				}
				if slices.Contains(v.Rules, r.label) {
					tl.hit++
				}
			case "pii":
				piiPos++
				tl := get(r.label)
				tl.pos++
				if v.Outcome == Leak && slices.Contains(v.Rules, r.label) {
					tl.hit++
					pii++
				} else if set == "all" {
					t.Logf("missed %s: %q (%v)", r.label, r.text, v.Rules)
				}
			case "tone":
				get("prescriptive").pos++
				if slices.ContainsFunc(v.Rules, func(id string) bool { return strings.HasPrefix(id, "prescriptive.") }) {
					get("prescriptive").hit++
				}
			}
			if kind != "medical" {
				negatives++
				if v.Outcome == Blocked {
					medFP++
					if set == "all" {
						t.Logf("false medical claim (%s): %q %v", r.label, r.text, v.Rules)
					}
				}
				for _, id := range v.Rules {
					if strings.HasPrefix(id, "medical.") {
						get(id).fp++
					}
				}
			}
			if kind != "pii" {
				nutrition++
				if v.Outcome == Leak {
					piiFP++
					if set == "all" {
						t.Logf("false PII (%s): %q %v", r.label, r.text, v.Rules)
					}
				}
				for _, id := range v.Rules {
					if strings.HasPrefix(id, "pii.") {
						get(id).fp++
					}
				}
			}
		}
		ids := make([]string, 0, len(rules))
		for id := range rules {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var b strings.Builder
		fmt.Fprintf(&b, "%s: medical recall %d/%d (%.1f %%), false positives %d/%d (%.2f %%); PII recall %d/%d (%.1f %%), false positives %d/%d\n",
			set, med, medPos, pct(med, medPos), medFP, negatives, pct(medFP, negatives), pii, piiPos, pct(pii, piiPos), piiFP, nutrition)
		for _, id := range ids {
			tl := rules[id]
			fmt.Fprintf(&b, "  %-22s recall %3d/%-3d false positives %d\n", id, tl.hit, tl.pos, tl.fp)
		}
		t.Log(b.String())
		if pct(med, medPos) < 95 || pct(medFP, negatives) > 0.5 {
			t.Errorf("%s: medical recall %.1f %% (want ≥ 95), false positives %.2f %% (want ≤ 0.5)", set, pct(med, medPos), pct(medFP, negatives))
		}
		for _, id := range []string{RuleEmail, RulePhone, RuleName} {
			if tl := rules[id]; tl != nil && pct(tl.hit, tl.pos) < 99 {
				t.Errorf("%s: %s recall below 99 %%", set, id)
			}
		}
		if piiFP > 0 {
			t.Errorf("%s: %d PII false positives on nutrition and numeric text, want 0", set, piiFP)
		}
	}
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
