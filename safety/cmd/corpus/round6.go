package main

import (
	"fmt"
	"strings"
)

// A sixth round, added after the split like the fourth and fifth: train
// part only, so the dev and test parts stay as dealt once. Unlike the
// earlier rounds it has no templates: testdata/round6.tsv holds sentences
// written by hand, one by one, as an assistant in a food, nutrition and
// wellness app would say them (recipe answers, meal logging, questions
// over the user's own logged numbers, chat), in English and in Spanish
// (Mexico and Spain, tú and usted), each claim and benign kind of the
// labelling rule. The templates' sentences are too uniform: a model
// fitted on them learns their shapes, and natural prose reads to it as
// new. Each sentence is its own family (prefix train6.), as a
// hand-written sentence of the split is.
//
// The lines are language, label, category and text, tab-separated, as in
// testdata/handwritten.tsv. A sentence the corpus already holds (in any
// part), or one of the sentences quoted from the set written apart, is
// left out.
func round6(path string, rows []row) ([]row, error) {
	hw, err := readHandwritten(path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, q := range quoted {
		seen["es\t"+strings.ToLower(q)] = true
	}
	for _, r := range rows {
		seen[r.lang+"\t"+strings.ToLower(r.text)] = true
	}
	n := map[string]int{}
	for _, r := range hw {
		if r.label != "claim" && r.label != "benign" {
			return nil, fmt.Errorf("%s: %q: label %q, want claim or benign", path, r.text, r.label)
		}
		k := r.lang + "\t" + strings.ToLower(r.text)
		if seen[k] {
			continue
		}
		seen[k] = true
		g := r.lang + "." + r.label + "." + r.cat
		n[g]++
		r.family = fmt.Sprintf("train6.%s.%04d", g, n[g])
		r.split = "train"
		rows = append(rows, r)
	}
	return rows, nil
}
