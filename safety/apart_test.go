package safety

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// apart.tsv is a labelled set written apart from everything the detector
// was built and tuned on (issue 37; docs/safety.md, "A set written
// apart"): written for this purpose in one sitting, blind to the corpus,
// its templates, the lexicon and the model, and committed before the
// detector was run on it. It is the held-out measure for the next model,
// which must not be tuned on it: no sentence, word list, rule or
// threshold may be chosen by looking at what this test reports.

// Each language holds at least this many sentences of a label, so that
// one benign sentence is at most 0.33 % of the benign ones.
const (
	apartMinClaims = 240
	apartMinBenign = 300
)

// apartKinds are the kinds a row may have, by label.
var apartKinds = map[string][]string{
	"claim":  {"cure", "treat", "prevent", "replace", "diagnose", "dose", "stop", "child_pregnancy"},
	"benign": {"recipe_condition", "deferral", "nutrition_fact", "allergen", "fitness", "cooking", "hedged", "chatter", "child_pregnancy_food", "user_data"},
}

// apartFloors are the figures of the set's latest measurement, by mode
// and language: claims blocked (%, rounded down) and benign stopped (%,
// rounded up). First measured on 2026-11-29 with the model and threshold
// shipped at 2d8dc06 (en 81.2 % and 5.4 %, es 70.5 % and 5.1 %); measured
// a second time, once, with the model of the corpus's sixth round
// (natural sentences written by hand, threshold 0.86), which was not
// tuned on this set and did better in both languages on both figures.
// The test holds every figure, so none can get worse unnoticed, and logs
// the gap to issue 37's targets where one is missed (all four, at both
// measurements). They are a regression guard, not a goal: raise them
// only when a model that was not tuned on this set does better.
var apartFloors = map[string]struct{ recall, falseBlocks float64 }{
	"language given/" + English:    {recall: 90.6, falseBlocks: 1.0}, // 232/256, 3/317
	"language given/" + Spanish:    {recall: 81.5, falseBlocks: 1.0}, // 208/255, 3/317
	"language detected/" + English: {recall: 90.6, falseBlocks: 1.0}, // 232/256, 3/317
	"language detected/" + Spanish: {recall: 81.5, falseBlocks: 1.0}, // 208/255, 3/317
}

// apartRow is one row of apart.tsv.
type apartRow struct {
	lang, label, kind, text string
}

func readApart(t testing.TB) []apartRow {
	t.Helper()
	f, err := os.Open("testdata/apart.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []apartRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("apart.tsv:%d: %d fields, want 4 (lang, label, kind, text)", n, len(f))
		}
		rows = append(rows, apartRow{lang: f[0], label: f[1], kind: f[2], text: f[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestApartSet checks the set itself: known languages, labels and kinds,
// no sentence twice, and enough of each label per language.
func TestApartSet(t *testing.T) {
	t.Parallel()
	rows := readApart(t)
	seen := map[string]bool{}
	n := map[string]int{}
	for _, r := range rows {
		if r.lang != English && r.lang != Spanish {
			t.Errorf("unknown language %q: %s", r.lang, r.text)
		}
		kinds, ok := apartKinds[r.label]
		if !ok {
			t.Errorf("unknown label %q: %s", r.label, r.text)
		}
		known := false
		for _, k := range kinds {
			known = known || k == r.kind
		}
		if !known {
			t.Errorf("kind %q is not a %s kind: %s", r.kind, r.label, r.text)
		}
		if seen[r.text] {
			t.Errorf("duplicate sentence: %s", r.text)
		}
		seen[r.text] = true
		n[r.lang+"/"+r.label]++
		n[r.lang+"/"+r.label+"/"+r.kind]++
	}
	for _, lang := range []string{English, Spanish} {
		if n[lang+"/claim"] < apartMinClaims || n[lang+"/benign"] < apartMinBenign {
			t.Errorf("%s: %d claims and %d benign sentences, want ≥ %d and ≥ %d",
				lang, n[lang+"/claim"], n[lang+"/benign"], apartMinClaims, apartMinBenign)
		}
		for label, kinds := range apartKinds {
			for _, k := range kinds {
				if n[lang+"/"+label+"/"+k] < 20 {
					t.Errorf("%s: %d %s sentences of kind %s, want ≥ 20", lang, n[lang+"/"+label+"/"+k], label, k)
				}
			}
		}
	}
}

// TestApartEvaluation judges every sentence of apart.tsv with the shipped
// filter, by the same rule as the corpus's test part (evaluate in
// heldout_test.go), told each sentence's language and left to detect it.
func TestApartEvaluation(t *testing.T) {
	t.Parallel()
	rows := readApart(t)
	// One pass over the whole set, and one per kind (the kind stands in
	// for the part evaluate selects on).
	var all, byKind []corpusRow
	for _, r := range rows {
		all = append(all, corpusRow{split: "apart", lang: r.lang, label: r.label, cat: r.kind, text: r.text})
		byKind = append(byKind, corpusRow{split: r.kind, lang: r.lang, label: r.label, cat: r.kind, text: r.text})
	}
	modes := []struct {
		name string
		lang func(corpusRow) string
	}{
		{"language given", func(r corpusRow) string { return r.lang }},
		{"language detected", func(corpusRow) string { return "" }},
	}
	for _, m := range modes {
		res := evaluate(all, "apart", m.lang)
		kinds := map[string]map[string]*heldOut{}
		for _, label := range []string{"claim", "benign"} {
			for _, k := range apartKinds[label] {
				kinds[k] = evaluate(byKind, k, m.lang)
			}
		}
		for _, lang := range []string{English, Spanish} {
			h := res[lang]
			t.Logf("apart, %s, %s: claims blocked %d/%d (%.2f %%), benign stopped %d/%d (%.2f %%)",
				m.name, lang, h.blocked, h.claims, pct(h.blocked, h.claims), h.falseBlocks, h.benign, pct(h.falseBlocks, h.benign))
			for _, k := range apartKinds["claim"] {
				if c := kinds[k][lang]; c.blocked < c.claims {
					t.Logf("  missed claims, %s: %d/%d", k, c.claims-c.blocked, c.claims)
				}
			}
			for _, k := range apartKinds["benign"] {
				if c := kinds[k][lang]; c.falseBlocks > 0 {
					t.Logf("  stopped benign, %s: %d/%d", k, c.falseBlocks, c.benign)
				}
			}
			if testing.Verbose() && len(h.misses) > 0 {
				t.Logf("  %s", strings.Join(h.misses, "\n  "))
			}
			floor := apartFloors[m.name+"/"+lang]
			recall, fb := pct(h.blocked, h.claims), pct(h.falseBlocks, h.benign)
			if recall < targetClaimRecall {
				t.Logf("%s, %s: claims blocked %.2f %%; the target, %.0f %%, is not reached yet", m.name, lang, recall, targetClaimRecall)
			}
			if fb > targetFalseBlockRate {
				t.Logf("%s, %s: benign stopped %.2f %%; the target, %.1f %%, is not reached yet", m.name, lang, fb, targetFalseBlockRate)
			}
			if recall < floor.recall {
				t.Errorf("%s, %s: claims blocked %.2f %%, below the first measurement's %.1f %%", m.name, lang, recall, floor.recall)
			}
			if fb > floor.falseBlocks {
				t.Errorf("%s, %s: benign stopped %.2f %%, above the first measurement's %.1f %%", m.name, lang, fb, floor.falseBlocks)
			}
		}
	}
}
