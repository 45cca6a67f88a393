package safety

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFilterStream: any text, cut anywhere twice, in either language or
// none, gets the whole text's verdict and lets out its Released; what is
// let out is always the text's start, all of it when it passed.
func FuzzFilterStream(f *testing.F) {
	for _, s := range []string{"Turmeric cures arthritis. Enjoy.", "Deja de tomar tu insulina y come más cúrcuma.",
		"Mi CURP es GOMA850312MJCRRN04.", "ana [at] x [dot] io", "Here is a plan.\nAsk your doctor.", "¿Tienes sed? Suena a diabetes.",
		strings.Repeat("oats and honey ", 20) + "cure gout.", "", "a", "  \t "} {
		f.Add(s, 3, 11, "es")
	}
	f.Fuzz(func(t *testing.T, text string, a, b int, lang string) {
		if !utf8.ValidString(text) || len(text) > 4000 {
			return
		}
		o := Options{Language: lang, DisplayName: "Ana Lima"}
		want := CheckText(text, o)
		cuts := []int{runeStart(text, a), runeStart(text, b)}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		got, sent := streamed(o, []string{text[:cuts[0]], text[cuts[0]:cuts[1]], text[cuts[1]:]})
		if !reflect.DeepEqual(got, want) || sent != want.Released {
			t.Fatalf("cut at %v: %+v, let out %q; whole: %+v", cuts, got, sent, want)
		}
		if !strings.HasPrefix(text, sent) || want.Outcome == Pass && sent != text {
			t.Fatalf("let out %q of %q (%v)", sent, text, want.Outcome)
		}
	})
}

// runeStart maps n onto a rune boundary of s.
func runeStart(s string, n int) int {
	if len(s) == 0 {
		return 0
	}
	k := (n%(len(s)+1) + len(s) + 1) % (len(s) + 1)
	for k > 0 && k < len(s) && !utf8.RuneStart(s[k]) {
		k--
	}
	return k
}

// FuzzClaimDetector: the detector's input is the model's text; reading
// it never panics, its features stay inside the model, and a text with
// no risk word is never a claim (what lets the stream release it
// unjudged).
func FuzzClaimDetector(f *testing.F) {
	for _, s := range []string{"turmeric cures arthritis", "tus síntomas indican que tienes celiaquía", "don't stop your insulin",
		"'", "’’’", "x'", "123 mg", "ÁÉÍÓÚÑ ñ", "cur cur cur"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		norm := normal(text)
		_ = DetectLanguage(text)
		_ = skeletonText(norm)
		for _, lang := range []string{English, Spanish} {
			for _, x := range claimFeatures(norm, lang, ruleEvidence(norm)) {
				if x >= claimDims {
					t.Fatalf("feature %d outside the model", x)
				}
			}
			if ids := claimHits(norm, lang); len(ids) > 0 && !medicalRisk(allowlisted.Replace(norm)) {
				t.Fatalf("%q is a claim (%v) without a risk word", text, ids)
			}
		}
	})
}
