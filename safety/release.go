package safety

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the stream lets out before a piece is judged (DESIGN §12,
// docs/safety.md). A piece's words go out as they arrive, up to its first
// word that a rule or the model could still make part of a claim or a
// leak; from that word on the piece is held until it ends, then judged
// whole. How much of a word may go out depends on the word alone and
// whether whitespace has ended it, never on how the text arrived: so the
// prefix let out before a blocked piece is the same streamed and whole,
// and with it the verdict.

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
// before it is judged, scanning from offset from (what went out already).
// A word may go out once the whitespace after it has arrived and it is
// not a risk (riskyWord): the next word need not have begun, so a stream
// that sends "word " at a time shows each word as it comes.
//
// A word the whitespace has not ended yet (a model streams " word", the
// space before it) goes out as far as its longest prefix that cannot begin
// anything that starts a hold (safePrefix): "Here" goes out on arrival,
// "The" waits, since "therapy" begins with it. The same prefix goes out of
// the first risk word of a stopped piece, or of its last: so what a stream
// let out is the same whichever chunks it came in, and the same as the
// whole text's. The last word of a piece passed goes out with its
// judgment, which the same whitespace decides (nextPiece).
//
// What goes out early is letters only, never a digit, "@", "+", a bracket
// or an address's punctuation: at most the local part of an address whose
// "@" or bracket is yet to come ("maria" of maria@example.com, or "ana" of
// "ana [at] example [dot] com"). The address is still matched when its
// piece is judged, and the answer stops there (a leak), before the domain:
// what went out is a word, not an address (docs/safety.md, "A word
// still arriving").
func (f *Filter) releasable(text string, from int) int {
	i := from
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		if unicode.IsSpace(r) {
			break
		}
		i -= size // back to the start of a word partly out already
	}
	for {
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += size
		}
		if j == len(text) || f.riskyWord(text[i:j]) {
			return i + f.safePrefix(text[i:j])
		}
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsSpace(r) {
				break
			}
			j += size
		}
		i = j
	}
}

// safePrefix is the length of word's longest prefix that may go out before
// the word has ended (partialSafe), 0 for none. Only prefixes of letters
// qualify, and the longest is tried first: it is the common answer.
func (f *Filter) safePrefix(word string) int {
	n := len(word)
	for k, r := range word {
		if !unicode.IsLetter(r) {
			n = k
			break
		}
	}
	for n > 0 {
		if f.partialSafe(word[:n]) {
			return n
		}
		_, size := utf8.DecodeLastRuneInString(word[:n])
		n -= size
	}
	return 0
}

// partialSafe reports whether p, the letters a word begins with, cannot
// begin anything that starts a hold, however the word goes on: no entry
// of the risk lexicon, no street type and no word of the user's name
// begins with it, none of the lexicon's entries is a prefix of it (it is
// no risk word already), and it could not be the letters an identifier
// opens with as written: one to four capitals (a CURP, an RFC), or a lone
// x, y or z (an NIE). Digits, "@", "+" and brackets, which begin or mark
// every other format (phones, emails, DNIs, house numbers), are no letters
// and are never out early.
func (f *Filter) partialSafe(p string) bool {
	runes, upper := 0, true
	for _, r := range p {
		runes++
		upper = upper && unicode.IsUpper(r)
	}
	w := fold(p)
	if upper && runes <= 4 || w == "x" || w == "y" || w == "z" {
		return false
	}
	if lexClass(w) != "" || beginsHoldWord(w) {
		return false
	}
	for name := range f.nameWords {
		if strings.HasPrefix(name, w) {
			return false
		}
	}
	return true
}

// holdWords are the words whose sight starts a hold, in order: the risk
// lexicon's exact words and prefixes and the street types. Derived from
// the lexicon itself, so a word added to it is waited for too.
var holdWords = func() []string {
	var ws []string
	for w := range lexicon.exact {
		ws = append(ws, w)
	}
	for w := range lexicon.prefix {
		ws = append(ws, w)
	}
	for w := range streetWords {
		ws = append(ws, w)
	}
	slices.Sort(ws)
	return slices.Compact(ws)
}()

// beginsHoldWord reports whether some hold word begins with w (or is w).
func beginsHoldWord(w string) bool {
	k, _ := slices.BinarySearch(holdWords, w)
	return k < len(holdWords) && strings.HasPrefix(holdWords[k], w)
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
