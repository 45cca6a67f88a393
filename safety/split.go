package safety

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The stream is released in pieces: a sentence at a time, or, when a
// sentence runs past MaxPiece characters, its first part up to the last
// space before MaxPiece-KeepTail characters. The rest (at least KeepTail
// characters) is held and checked again with what follows, so a match that
// straddles the cut is still seen: every rule's match is shorter than
// KeepTail (docs/safety.md).
const (
	MaxPiece = 200
	KeepTail = 100
)

// abbreviations end in a full stop that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "dr": true, "mr": true, "mrs": true, "ms": true, "vs": true,
	"approx": true, "st": true, "no": true, "tbsp": true, "tsp": true, "oz": true, "lb": true, "lbs": true,
	"incl": true, "min": true, "max": true, "ca": true, "cf": true, "fig": true, "ave": true, "blvd": true, "rd": true,
	// Spanish, and what addresses abbreviate in it: "Av. Juárez 1017, Col. Roma, C.P. 06700".
	"av": true, "avda": true, "col": true, "c.p": true, "núm": true, "ctra": true, "pza": true, "calz": true, "dra": true,
	"sr": true, "sra": true, "srta": true, "lic": true, "tel": true, "ej": true, "aprox": true, "pág": true,
}

// closers may follow a sentence's final mark before the space.
func closer(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '’', '”', '»', '*', '_':
		return true
	}
	return false
}

func terminal(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '…' }

// nextPiece finds the next piece of buf, the text not yet released: n
// bytes to release, after checking the first window bytes (window >= n).
// ok is false when buf does not decide the piece yet and more text may
// come; final says none will. The answer depends only on buf's prefix up
// to window plus one character of lookahead, so a piece is the same
// however the text arrived in chunks: that is what makes the verdict
// independent of chunking.
func nextPiece(buf string, final bool) (n, window int, ok bool) {
	runes := 0
	cutLimit := -1 // byte offset after MaxPiece-KeepTail runes
	for i, r := range buf {
		if runes == MaxPiece-KeepTail {
			cutLimit = i
		}
		if runes == MaxPiece {
			return forcedCut(buf, cutLimit), i, true
		}
		runes++
		size := utf8.RuneLen(r)
		if r == '\n' {
			if runes <= MaxPiece {
				return i + size, i + size, true
			}
			continue
		}
		if !terminal(r) {
			continue
		}
		j := i + size
		for j < len(buf) {
			c, sz := utf8.DecodeRuneInString(buf[j:])
			if !closer(c) && !terminal(c) {
				break
			}
			j += sz
		}
		if j == len(buf) {
			if final {
				return len(buf), len(buf), true
			}
			return 0, 0, false // a decimal point or the end of a sentence: the next character tells
		}
		next, sz := utf8.DecodeRuneInString(buf[j:])
		if !unicode.IsSpace(next) || (r == '.' && (abbreviated(buf[:i]) || listMarker(buf[:i]))) {
			continue
		}
		end := j + sz
		if runes+utf8.RuneCountInString(buf[i+size:end]) <= MaxPiece {
			return end, end, true
		}
	}
	if runes == MaxPiece && len(buf) > 0 {
		return forcedCut(buf, cutLimit), len(buf), true
	}
	if final && len(buf) > 0 {
		return len(buf), len(buf), true
	}
	return 0, 0, false
}

// forcedCut is where a sentence longer than MaxPiece is cut: after the
// last space before limit, so no word (an email address, say) is split,
// or at limit when there is no space at all.
func forcedCut(buf string, limit int) int {
	if k := strings.LastIndexFunc(buf[:limit], unicode.IsSpace); k >= 0 {
		_, sz := utf8.DecodeRuneInString(buf[k:])
		return k + sz
	}
	return limit
}

// abbreviated reports whether the word before a full stop is an
// abbreviation, so the stop ends no sentence.
func abbreviated(before string) bool {
	k := strings.LastIndexFunc(before, func(r rune) bool { return !unicode.IsLetter(r) && r != '.' })
	return abbreviations[strings.ToLower(before[k+1:])]
}

// listMarker reports whether the text before a full stop is a numbered
// list's marker ("1." at a line's start: a piece always starts a line), so
// the stop ends no sentence and the item is read whole, its marker and
// its words one piece, as a bulleted item ("- stops the flu") is.
func listMarker(before string) bool {
	d := strings.TrimLeftFunc(before, unicode.IsSpace)
	if d == "" || len(d) > 3 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Sentences splits text into the pieces the stream filter releases: their
// concatenation is text.
func Sentences(text string) []string {
	var out []string
	for text != "" {
		n, _, _ := nextPiece(text, true)
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}
