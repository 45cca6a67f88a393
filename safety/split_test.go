package safety

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSentences(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("oats and milk ", 20) // 280 characters, no boundary
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"sentences", "Hello there. How are you? Fine!", []string{"Hello there. ", "How are you? ", "Fine!"}},
		{"decimals and times stay whole", "Use 2.5 g at 07:30. Done.", []string{"Use 2.5 g at 07:30. ", "Done."}},
		{"abbreviations", "Add spices, e.g. cumin. Then stir.", []string{"Add spices, e.g. cumin. ", "Then stir."}},
		{"closing quote", `She said "done." Next.`, []string{`She said "done." `, "Next."}},
		{"line breaks", "- oats\n- milk\n", []string{"- oats\n", "- milk\n"}},
		{"ellipsis and marks", "Wait… What?! Ok", []string{"Wait… ", "What?! ", "Ok"}},
		{"a long sentence is cut at a space, keeping a tail",
			long, []string{long[:98], long[98:]}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sentences(tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("Sentences(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzSentences: the pieces are the text, none is longer than MaxPiece
// characters, and a piece decided on a prefix of the text is the piece
// the whole text gives (what makes the verdict independent of chunking).
func FuzzSentences(f *testing.F) {
	for _, s := range []string{"Hello. World", "a.b. c", "e.g. x", strings.Repeat("word ", 60), strings.Repeat("x", 250),
		"Done?!\" Next", "…\n\n", "3.5. 4"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, text string, cut int) {
		if !utf8.ValidString(text) {
			return
		}
		pieces := Sentences(text)
		if strings.Join(pieces, "") != text {
			t.Fatalf("pieces %q are not %q", pieces, text)
		}
		for _, p := range pieces {
			if p == "" || utf8.RuneCountInString(p) > MaxPiece {
				t.Fatalf("piece %q of %q", p, text)
			}
		}
		if len(text) == 0 {
			return
		}
		k := cut % (len(text) + 1)
		if k < 0 {
			k = -k
		}
		for k > 0 && !utf8.RuneStart(text[k%len(text)]) && k < len(text) {
			k--
		}
		n, w, ok := nextPiece(text[:k], false)
		if !ok {
			return
		}
		n2, w2, ok2 := nextPiece(text, false)
		if !ok2 || n != n2 || w != w2 {
			t.Fatalf("prefix %q gave piece (%d, %d); the text %q gives (%d, %d, %v)", text[:k], n, w, text, n2, w2, ok2)
		}
	})
}
