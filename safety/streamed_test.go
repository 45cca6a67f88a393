package safety

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// modelTokens cuts text as a model streams it: each word with the space
// before it ("Here", " is", " a"), punctuation on its word.
func modelTokens(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if i > start && unicode.IsSpace(r) {
			prev, _ := utf8.DecodeLastRuneInString(text[:i])
			if !unicode.IsSpace(prev) {
				out = append(out, text[start:i])
				start = i
			}
		}
	}
	return append(out, text[start:])
}

// streamed runs text through a filter in the given chunks and returns
// the verdict and what was let out.
func streamed(o Options, chunks []string) (Verdict, string) {
	f := NewFilter(o)
	var sent strings.Builder
	for _, c := range chunks {
		sent.WriteString(f.Write(c))
	}
	sent.WriteString(f.Close())
	return f.Verdict(), sent.String()
}

// DESIGN §12's property over the whole corpus and eval.tsv, sentence for
// sentence: the verdict streamed (as a model's tokens, and in random
// chunks) is the verdict of the whole text, and what was let out is the
// verdict's Released; answers of several sentences too.
func TestStreamedEqualsWholeOverCorpus(t *testing.T) {
	t.Parallel()
	var texts []string
	for _, r := range readCorpus(t) {
		texts = append(texts, r.text)
	}
	for _, r := range readEval(t) {
		texts = append(texts, r.text)
	}
	for i := 0; i+4 <= len(texts); i += 4 {
		texts = append(texts, strings.Join(texts[i:i+4], " "))
	}
	r := rand.New(rand.NewPCG(37, 12))
	o := Options{DisplayName: "Dana Whitfield"}
	outcomes := map[Outcome]int{}
	for i, text := range texts {
		if testing.Short() && i%10 != 0 {
			continue // -short streams every tenth text
		}
		want := CheckText(text, o)
		outcomes[want.Outcome]++
		for _, cut := range [][]string{modelTokens(text), chunks(r, text)} {
			got, sent := streamed(o, cut)
			if !reflect.DeepEqual(got, want) || sent != want.Released {
				t.Fatalf("%q in %q:\nstreamed %+v, let out %q\nwhole    %+v", text, cut, got, sent, want)
			}
		}
	}
	t.Logf("%d texts streamed two ways: %d passed, %d blocked, %d leaked", len(texts), outcomes[Pass], outcomes[Blocked], outcomes[Leak])
}

// A sentence with no risk word is let out word by word as a model streams
// it (each word with the space before it): every word before the one
// arriving is out, and most words are out the moment they arrive, the
// rest (a word "the", "a" or "in" begins: "therapy", "allergy",
// "infection") one word later. Measured over the corpus's benign sentences
// that hold no risk word.
func TestRiskFreeSentencesReleasedWordByWord(t *testing.T) {
	t.Parallel()
	riskFree, benign, words, onArrival := 0, 0, 0, 0
	for _, r := range readCorpus(t) {
		if r.label != "benign" {
			continue
		}
		benign++
		f := NewFilter(Options{})
		if f.releasable(r.text+" x", 0) < len(r.text)+1 {
			continue // a risk word, a digit: held from there
		}
		riskFree++
		toks := modelTokens(r.text)
		var sent strings.Builder
		for i, tok := range toks {
			sent.WriteString(f.Write(tok))
			got := strings.TrimRightFunc(sent.String(), unicode.IsSpace)
			before := strings.TrimRightFunc(strings.Join(toks[:i], ""), unicode.IsSpace)
			if !strings.HasPrefix(got, before) {
				t.Fatalf("%q: after %q let out %q, want at least %q", r.text, tok, got, before)
			}
			// A word is out on arrival when its letters are: its
			// punctuation may wait for the sentence's end to be decided.
			word := strings.TrimRightFunc(strings.Join(toks[:i+1], ""), func(r rune) bool { return !unicode.IsLetter(r) })
			words++
			if got == word || strings.HasPrefix(got, word) {
				onArrival++
			}
		}
	}
	if riskFree < benign/4 {
		t.Fatalf("%d of %d benign sentences hold no risk word; the lexicon holds back most text", riskFree, benign)
	}
	// A filter that waits for a word's end lets out none on arrival.
	if pct(onArrival, words) < 60 {
		t.Fatalf("%d of %d words (%.0f %%) went out as they arrived, want most", onArrival, words, pct(onArrival, words))
	}
	t.Logf("%d of %d benign sentences (%.0f %%) went out word by word; %d of their %d words (%.0f %%) the moment they arrived",
		riskFree, benign, pct(riskFree, benign), onArrival, words, pct(onArrival, words))
}
