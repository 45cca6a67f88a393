package safety

import (
	"reflect"
	"strings"
	"testing"
)

// A word still arriving goes out as far as its letters cannot begin
// anything that starts a hold: a risk word, a street type, the user's
// name, an identifier's capitals; never a digit, "@" or a bracket.
func TestPartialWordRelease(t *testing.T) {
	t.Parallel()
	o := Options{DisplayName: "Alice Secretname"}
	for _, tc := range []struct{ in, want string }{
		{"Here", "Here"},
		{"Sure", "Sure"},
		{"Oats are great", "Oats are great"},
		{"Aquí tienes", "Aquí tienes"},
		{"The", ""},            // "therapy" begins with it
		{"Cu", ""},             // "cure"
		{"Cúrcuma", "Cúrcuma"}, // a food, no risk word, though "cur…" is
		{"diab", ""},
		{"Here4", "Here"}, // a digit: a phone, a dose
		{"+34", ""},
		{"(555", ""},
		{"maria@ex", "maria"}, // the local part, never the "@"
		{"bob.sm", "bob"},
		{"GOMA", ""}, // a CURP's or an RFC's capitals
		{"Goma", "Goma"},
		{"X", ""}, // an NIE
		{"Ali", ""},
		{"Hola Secr", "Hola "},
		{"cal", ""}, // "calle"
		{"Appendic", "Appendic"},
	} {
		f := NewFilter(o)
		if got := f.Write(tc.in); got != tc.want {
			t.Errorf("%q: let out %q, want %q", tc.in, got, tc.want)
		}
	}
}

// However the text is cut, what goes out and the verdict are the whole
// text's; and out of an answer stopped for personal data nothing of the
// data but a local part's letters ever goes out: no digit, no "@", no
// domain, no part of the user's name.
func TestPartialReleaseEveryCut(t *testing.T) {
	t.Parallel()
	o := Options{DisplayName: "Alice Secretname"}
	for _, text := range []string{
		"Write to maria@example.com today.",
		"Write to bob.smith@example.com, please.",
		"Try cucumber4 now. Then rest.",
		"Here is what appendicitis means: cinnamon cures it.",
		"Oats are fine. Turmeric cures arthritis.",
		"Her CURP is GOMA850101HDFRRN09.",
		"Su NIE es X1234567L.",
		"Call me on +34 612 345 678 tonight.",
		"Hola Alice Secretname, aquí tienes tu plan.",
		"Vive en calle Mayor 12, Madrid.",
		"Goma 850101 XX1 is an RFC.",
	} {
		want := CheckText(text, o)
		var cuts [][]string
		var bytes []string
		for _, r := range text {
			bytes = append(bytes, string(r))
		}
		cuts = append(cuts, bytes, modelTokens(text))
		for i := 1; i < len(text); i++ {
			for j := i + 1; j < len(text); j += 3 {
				cuts = append(cuts, []string{text[:i], text[i:j], text[j:]})
			}
		}
		for _, cut := range cuts {
			got, sent := streamed(o, cut)
			if !reflect.DeepEqual(got, want) || sent != want.Released {
				t.Fatalf("%q in %q:\nstreamed %+v, let out %q\nwhole    %+v", text, cut, got, sent, want)
			}
		}
		if want.Outcome == Leak && (strings.ContainsAny(want.Released, "0123456789@") ||
			strings.Contains(want.Released, "example") || strings.Contains(strings.ToLower(want.Released), "ali")) {
			t.Errorf("%q: a leak let out %q", text, want.Released)
		}
		t.Logf("%q: %v, let out %q", text, want.Outcome, want.Released)
	}
}
