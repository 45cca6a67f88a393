package safety

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the stream lets out before a piece is judged (DESIGN §12,
// docs/safety.md). A piece's words go out as they arrive, up to its first
// word that a rule or the model could still make part of a claim or a
// leak; from that word on the piece is held until it ends, then judged
// whole. Whether a word may go out depends on the word alone and the
// first character after the space that ends it, never on how the text
// arrived: so the prefix let out before a blocked piece is the same
// streamed and whole, and with it the verdict.

// streetWords begin a street address in Spanish ("calle Mayor 12"): held,
// as the address after them would be.
var streetWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`calle c av avda avenida paseo plaza pza ronda camino carretera ctra travesia glorieta
		calzada calz bulevar boulevard blvd privada cerrada callejon andador circuito prolongacion carrera cra col colonia cp`) {
		m[w] = true
	}
	return m
}()

// releasable is how far text, a piece or the start of one, may go out
// before it is judged: the end of the whitespace after its last word that
// may, scanning from offset from (a word's start). A word may go out once
// the whitespace after it has arrived and it is not a risk (riskyWord):
// the next word need not have begun, so a stream that sends "word " at a
// time shows each word as it comes. The last word of a piece goes out
// with its judgment, which the same whitespace decides (nextPiece).
//
// The one thing this lets out early is the plain local part of an address
// written with brackets: "ana" of "ana [at] example [dot] com" goes out
// before the bracket arrives. The address is still matched when its piece
// is judged, and the answer stops there (a leak), before the domain: what
// went out is a word, not an address. A local part with an address's
// punctuation (ana.sousa, ana_s) is held (docs/safety.md, "Release").
func (f *Filter) releasable(text string, from int) int {
	i := from
	for {
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += size
		}
		k := j
		for k < len(text) {
			r, size := utf8.DecodeRuneInString(text[k:])
			if !unicode.IsSpace(r) {
				break
			}
			k += size
		}
		if j == len(text) || f.riskyWord(text[i:j]) {
			return i
		}
		i = k
	}
}

// riskyWord reports whether a word (text between spaces) could be part of
// a claim or of personal data: a risk-lexicon word, a digit (phones,
// identifiers, doses, house numbers), "@" or a bracket (emails), an
// address's punctuation inside the word (ana.sousa, ana_s: a local part),
// a word of the user's name, or a street type.
func (f *Filter) riskyWord(tok string) bool {
	if strings.ContainsAny(tok, "0123456789@[(") || strings.ContainsAny(strings.TrimRightFunc(tok, endMark), "._+%") {
		return true
	}
	risky := false
	wordsOf(tok, func(w string, _, _ int) {
		if !risky && (lexClass(w) != "" || streetWords[w] || f.nameWords[w]) {
			risky = true
		}
	})
	return risky
}

// endMark is a sentence's final mark or a closer after it: "oats." and
// "(see above)." end a word, they are no address's punctuation.
func endMark(r rune) bool { return terminal(r) || closer(r) || r == ',' || r == ';' || r == ':' }

// nameWordSet are the folded words of a display name, each held on
// sight: the name rule matches the whole name and its longer words, and
// which of them a sentence holds is known only once it is read.
func nameWordSet(display string) map[string]bool {
	m := map[string]bool{}
	wordsOf(display, func(w string, _, _ int) { m[w] = true })
	return m
}
