package safety_test

import (
	"testing"

	"github.com/voxgate/voxgate/safety"
)

// A blocked claim is replaced in the language it was read in: the user's
// when the caller knows it, else the claim's own. An answer not blocked
// has no fallback.
func TestFallbackInTheClaimsLanguage(t *testing.T) {
	t.Parallel()
	const es = "La avena es un buen desayuno. La canela cura la diabetes tipo 2."
	const en = "Oats are a good breakfast. Cinnamon cures type 2 diabetes."
	for _, tc := range []struct {
		name, text, language, want string
	}{
		{"Spanish, no profile language", es, "", safety.FallbackES},
		{"English, no profile language", en, "", safety.Fallback},
		{"Spanish, the profile says es-MX", es, "es-MX", safety.FallbackES},
		{"Spanish words, the profile says en", es, "en", safety.Fallback},
	} {
		v := safety.CheckText(tc.text, safety.Options{Language: tc.language})
		if v.Outcome != safety.Blocked || v.Fallback != tc.want {
			t.Errorf("%s: outcome %v, fallback %q; want blocked, %q", tc.name, v.Outcome, v.Fallback, tc.want)
		}
		f := safety.NewFilter(safety.Options{Language: tc.language})
		for _, w := range []byte(tc.text) { // streamed a byte at a time: the same
			f.Write(string(w))
		}
		f.Close()
		if f.Fallback() != tc.want {
			t.Errorf("%s, streamed: fallback %q, want %q", tc.name, f.Fallback(), tc.want)
		}
	}
	if v := safety.CheckText("Oats are a good breakfast.", safety.Options{}); v.Fallback != "" {
		t.Errorf("an answer that passed has fallback %q", v.Fallback)
	}
}
