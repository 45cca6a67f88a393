package safety

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// answers are realistic replies, one for each way an answer can end.
var answers = []struct {
	name    string
	text    string
	outcome Outcome
}{
	{"plain", "Here is a quick lunch idea. Try a lentil salad with feta, mint and lemon. It has about 22 g of protein per serving, and it keeps for 3 days in the fridge.", Pass},
	{"tone", "You should add a handful of spinach. It wilts in a minute. You need to stir it well.", Pass},
	{"claim mid-answer", "Oats are a great breakfast. Add berries for colour. Turmeric cures arthritis, so add a pinch. Then enjoy it warm.", Blocked},
	{"email", "Sure! Your coach can be reached at coach.mike@gymmail.example.com for questions. Happy training.", Leak},
	{"name", "Great progress this week, Alice Secretname. Keep it up.", Leak},
	{"long sentence with a claim at the cut", strings.Repeat("we roast the carrots and the parsnips ", 5) + "and this dish treats your arthritis " + strings.Repeat("with lots of roasted garlic ", 4) + "done.", Blocked},
	{"long sentence without a claim", strings.Repeat("a slow simmer makes the beans creamy and the broth rich ", 9) + "enjoy.", Pass},
	{"disclaimer", "I can provide general wellness suggestions, but please consult a healthcare provider for medical advice. Meanwhile, a short walk can feel good.", Pass},
}

// chunks cuts text at random places, sometimes in the middle of a
// character's bytes' neighbours but never inside one.
func chunks(r *rand.Rand, text string) []string {
	var out []string
	for text != "" {
		n := 1 + r.IntN(min(len(text), 40))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// The property of DESIGN §12: an answer's verdict, and the text released,
// are the same for every chunking of it as for the whole text.
func TestChunkingInvariance(t *testing.T) {
	t.Parallel()
	o := Options{DisplayName: "Alice Secretname"}
	r := rand.New(rand.NewPCG(24, 1))
	for _, a := range answers {
		want := CheckText(a.text, o)
		if want.Outcome != a.outcome {
			t.Fatalf("%s: outcome %v, want %v (%v)", a.name, want.Outcome, a.outcome, want.Rules)
		}
		for i := 0; i < 1000; i++ {
			f := NewFilter(o)
			var sent strings.Builder
			for _, c := range chunks(r, a.text) {
				sent.WriteString(f.Write(c))
			}
			sent.WriteString(f.Close())
			got := f.Verdict()
			if !reflect.DeepEqual(got, want) || sent.String() != want.Released {
				t.Fatalf("%s, chunking %d: verdict %+v, sent %q; whole text: %+v", a.name, i, got, sent.String(), want)
			}
		}
	}
}

// A claim split across chunks is never released: its sentence goes out
// word by word up to its first risk word ("cures"), then nothing more;
// the sentences before it go out as they arrive.
func TestClaimSplitAcrossChunks(t *testing.T) {
	t.Parallel()
	f := NewFilter(Options{})
	var sent []string
	for _, c := range []string{"Oats are a great break", "fast. Add berries. Turmeric cu", "res arth", "ritis. Enjoy", " it warm."} {
		sent = append(sent, f.Write(c))
	}
	sent = append(sent, f.Close())
	want := []string{"Oats are a great break", "fast. Add berries. Turmeric ", "", "", "", ""}
	if !slices.Equal(sent, want) {
		t.Fatalf("released %q, want %q", sent, want)
	}
	v := f.Verdict()
	if v.Outcome != Blocked || !slices.Equal(v.Rules, []string{RuleCure}) || len(v.Flags) != 1 ||
		v.Flags[0].Type != MedicalClaim || !v.Flags[0].Blocked {
		t.Fatalf("verdict %+v", v)
	}
	if v.Kept != "Oats are a great breakfast. Add berries. " {
		t.Fatalf("kept %q, want the whole sentences before the claim", v.Kept)
	}
}

// An email address split across chunks is never released in part; one
// written with brackets may have its plain local part out before the
// bracket arrives (a word), never its domain: the piece is judged a leak
// and the answer stops. A local part with an address's punctuation is
// held.
func TestEmailSplitAcrossChunks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		chunks []string
		want   string
	}{
		{[]string{"Sure. Write to ana.sou", "sa@exam", "ple.com today."}, "Sure. Write to "},
		{[]string{"Sure. Write to ana ", "[at] example ", "[dot] com today."}, "Sure. Write to ana "},
		{[]string{"Sure. Write to ana.sousa ", "[at] example ", "[dot] com today."}, "Sure. Write to "},
		{[]string{"Sure. Write to ana_s ", "(at) example ", "(dot) com today."}, "Sure. Write to "},
	} {
		f := NewFilter(Options{})
		var sent string
		for _, c := range tc.chunks {
			sent += f.Write(c)
		}
		sent += f.Close()
		if sent != tc.want || f.Verdict().Outcome != Leak || strings.Contains(sent, "example") {
			t.Fatalf("%q: sent %q, want %q; verdict %+v", tc.chunks, sent, tc.want, f.Verdict())
		}
	}
}

// Text without a risk word goes out word by word: a word on arrival when
// no risk word, street type or identifier could begin with it, else as
// soon as the whitespace after it has arrived, whichever side of the word
// a model's chunks carry it on. From the first risk word the sentence is
// held to its end; a sentence's last word goes out with its judgment
// (its letters before that).
func TestReleaseWordByWord(t *testing.T) {
	t.Parallel()
	for _, steps := range [][]struct{ in, want string }{
		// "a" begins "allergy", "doctor" is a risk word (nothing of it goes
		// out early: each of its prefixes begins it), "plan." waits for its
		// stop to be decided.
		{{"Here", "Here"}, {" is", " is"}, {" a", " "}, {" plan", "a plan"}, {".", ""}, {" Ask", ". Ask"},
			{" your", " your"}, {" doctor", " "}, {" about", ""}, {" it", ""}, {".", ""}, {" Enjoy", "doctor about it. Enjoy"}},
		{{"Here ", "Here "}, {"is ", "is "}, {"a ", "a "}, {"plan.", "plan"}, {" ", ". "}, {"Ask ", "Ask "},
			{"your ", "your "}, {"doctor ", ""}, {"about it. ", "doctor about it. "}, {"Low-fat ", "Low-fat "}, {"e.g. ", ""}},
	} {
		f := NewFilter(Options{})
		for _, step := range steps {
			if got := f.Write(step.in); got != step.want {
				t.Fatalf("after %q released %q, want %q", step.in, got, step.want)
			}
		}
	}
}

func TestPIIDetectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text, display string
		want                []string
	}{
		{"email", "mail ana@example.com", "", []string{RuleEmail}},
		{"obfuscated email", "ana [at] example [dot] com", "", []string{RuleEmail}},
		{"US phone", "call 415-555-0132", "", []string{RulePhone}},
		{"international phone", "call +44 20 7946 0958", "", []string{RulePhone}},
		{"00 prefix", "call 0044 20 7946 0958", "", []string{RulePhone}},
		{"quantities", "2 x 250 g, 1,800 kcal, 12,456 steps", "", nil},
		{"date", "on 2024-05-12 and 12/05/2024", "", nil},
		{"time", "from 23:30 to 07:00", "", nil},
		{"order id", "order 4155550132 and invoice #4155550132", "", nil},
		{"decimal", "pi is 3.14159265", "", nil},
		{"full name", "well done, alice secretname", "Alice Secretname", []string{RuleName}},
		{"given name alone", "well done, Alice", "Alice Secretname", []string{RuleName}},
		{"name inside a word is no name", "a banana", "Ana Lima", nil},
		{"accented name, word-bounded", "bravo Siobhán!", "Siobhán Kelly", []string{RuleName}},
		{"a common word alone is not the user", "add ginger and a bay leaf", "Ginger Baker", nil},
		{"a common word in the whole name is", "hi ginger baker", "Ginger Baker", []string{RuleName}},
		{"a one-word common name is never matched", "grated ginger", "Ginger", nil},
		{"short given names count only with the surname", "add jo's oats; Al is here", "Al Jo", nil},
		{"short name in full", "hi al jo", "Al Jo", []string{RuleName}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := piiHits(tc.text, normal(tc.text), nameMatcher(tc.display))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("piiHits(%q, name %q) = %v, want %v", tc.text, tc.display, got, tc.want)
			}
		})
	}
}

// FuzzPII: the scanner never panics, its candidates lie inside the text,
// and the stream's verdict is the whole text's.
func FuzzPII(f *testing.F) {
	for _, s := range []string{"call +1 415 555 0132", "a@b.co", "(((((", "+", "00", "1 2 3 4 5 6 7 8", "ana [at] x [dot] io",
		"order #123456789", "2024-01-01", strings.Repeat("9", 40)} {
		f.Add(s, "Ana Lima", 5)
	}
	f.Fuzz(func(t *testing.T, text, name string, cut int) {
		if !utf8.ValidString(text) || !utf8.ValidString(name) {
			return
		}
		for _, m := range phoneCandidates(text) {
			if m[0] < 0 || m[1] > len(text) || m[0] >= m[1] {
				t.Fatalf("candidate %v outside %q", m, text)
			}
			phoneHit(text, m)
		}
		o := Options{DisplayName: name}
		want := CheckText(text, o)
		k := 0
		if len(text) > 0 {
			k = (cut%len(text) + len(text)) % len(text)
			for k > 0 && !utf8.RuneStart(text[k]) {
				k--
			}
		}
		fl := NewFilter(o)
		sent := fl.Write(text[:k]) + fl.Write(text[k:]) + fl.Close()
		if got := fl.Verdict(); !reflect.DeepEqual(got, want) || sent != want.Released {
			t.Fatalf("split at %d: %+v, whole: %+v", k, got, want)
		}
		if want.Outcome == Pass && sent != text {
			t.Fatalf("a passed text was released as %q, not %q", sent, text)
		}
	})
}
