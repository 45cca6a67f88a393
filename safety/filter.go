package safety

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Flag types of the output filters.
const (
	MedicalClaim     = "medical_claim"
	PrescriptiveTone = "prescriptive_tone"
)

// Filter names, as a verdict and the audit row list those that ran.
const (
	FilterInput        = "input"
	FilterMedical      = "medical"
	FilterPrescriptive = "prescriptive"
	FilterPII          = "pii"
)

// Outcome is what the output filters made of an answer.
type Outcome int

const (
	// Pass: the answer goes out whole (it may carry flags).
	Pass Outcome = iota
	// Blocked: a medical claim; the answer is cut before the sentence
	// that made it and the caller sends Fallback after it.
	Blocked
	// Leak: personal data; the caller rejects the turn with AI_PII_LEAK
	// and keeps nothing of the answer.
	Leak
)

// Verdict is the filters' judgement of one answer.
type Verdict struct {
	Outcome Outcome
	// Released is the text the filter let out, in order: the whole answer
	// on Pass; when Blocked or Leak, the pieces before the one stopped and
	// that piece's words before its first risk word, with that word's
	// letters nothing that starts a hold could begin with (release.go).
	Released string
	// Kept is Released without the stopped piece's words: the whole
	// sentences before it. A caller that shows nothing before the verdict
	// (a whole answer spoken by a voice, a card) ends with a sentence, not
	// with a stopped sentence's first words.
	Kept string
	// Rules are the ids of the rules that matched, sorted, each once.
	Rules []string
	// Flags are the safety_flags to report: a blocked medical claim, and
	// prescriptive tone.
	Flags []Flag
	// Ran are the output filters that ran over every released piece.
	Ran []string
	// Judged are the sentences put to the judge (Options.Judge), in order.
	Judged []Judgement
	// Fallback is what replaces the claim when Blocked (Filter.Fallback),
	// "" otherwise.
	Fallback string
}

// Options configure a filter for one user.
type Options struct {
	// DisplayName is the user's name from the profile, "" when unknown:
	// the model never saw it, so the answer must not hold it.
	DisplayName string
	// Language is the user's language when the caller knows it (the
	// profile's "language", a tag such as "es" or "es-MX"): each piece is
	// read in it. "" (or a language the filter does not read) has each
	// piece's language detected from its words. The claim model reads
	// both languages whichever is chosen; the language picks the
	// prescriptive-tone rules and is one of the model's features.
	Language string
	// Judge, when set, is asked about sentences the claim model is
	// unsure of (judge.go); nil never asks.
	Judge Judge
	// JudgeBand is the unsure band's half width; 0 is DefaultJudgeBand.
	JudgeBand float32
}

// Filter is the streaming output filter of DESIGN §12. Text goes in as it
// arrives (Write). A piece (a sentence, split.go) goes out word by word
// until its first risk word (release.go); from there it is held to its
// end and judged whole by every rule and the claim model, then let out
// or stopped. Close releases the rest. CheckText runs the same filter
// over a whole text, so a streamed answer, a whole one, tool arguments and
// card text all get one verdict. A Filter is not safe for concurrent use.
type Filter struct {
	opts      Options
	name      names
	nameWords map[string]bool
	buf       string // text of the piece being read and after it, not yet judged
	sent      int    // bytes of buf let out ahead of the judgment
	released  strings.Builder
	kept      int // bytes of released before the piece being read
	outcome   Outcome
	rules     []string
	tone      bool
	judged    []Judgement
	// stoppedIn is the language the stopped piece was read in: the
	// user's when known, else the piece's own.
	stoppedIn string
}

// NewFilter makes a filter for one answer.
func NewFilter(o Options) *Filter {
	return &Filter{opts: o, name: nameMatcher(o.DisplayName), nameWords: nameWordSet(o.DisplayName)}
}

// Options are the filter's, for checking other text of the same answer
// (tool arguments, cards) with CheckText.
func (f *Filter) Options() Options { return f.opts }

// Outcome is the verdict's outcome so far.
func (f *Filter) Outcome() Outcome { return f.outcome }

// Fallback is what replaces a blocked claim, in the language the claim was
// read in: the user's when the caller knows it, else the claim's own, so
// that a Spanish speaker with no profile language is not answered in
// English. English for an answer not blocked.
func (f *Filter) Fallback() string { return FallbackFor(f.stoppedIn) }

// Write takes the next delta of the answer and returns the text that may
// be shown now ("" while a piece is still being read, and for ever once
// the answer is blocked or leaked).
func (f *Filter) Write(delta string) string {
	if f.outcome != Pass {
		return ""
	}
	f.buf += delta
	return f.drain(false)
}

// Close ends the answer and returns the rest of it that may be shown.
func (f *Filter) Close() string {
	if f.outcome != Pass {
		return ""
	}
	return f.drain(true)
}

// drain judges every piece buf completes and lets out what may go: a
// passed piece whole, a stopped one up to its first risk word (which was
// let out already, or goes now), and of the piece still arriving the
// words before its first risk word.
func (f *Filter) drain(final bool) string {
	var out strings.Builder
	for f.buf != "" {
		n, window, ok := nextPiece(f.buf, final)
		if !ok {
			if k := f.releasable(f.buf, f.sent); k > f.sent {
				out.WriteString(f.buf[f.sent:k])
				f.sent = k
			}
			break
		}
		f.kept = f.released.Len() + out.Len() - f.sent
		if !f.judge(f.buf[:window]) {
			if k := f.releasable(f.buf[:window], f.sent); k > f.sent {
				out.WriteString(f.buf[f.sent:k])
			}
			f.buf, f.sent = "", 0
			break
		}
		if n > f.sent {
			out.WriteString(f.buf[f.sent:n])
		}
		// A long sentence's cut keeps a tail to judge again with what
		// follows; words of it may have gone out already.
		f.sent = max(0, f.sent-n)
		f.buf = f.buf[n:]
	}
	f.released.WriteString(out.String())
	return out.String()
}

// judge runs every rule and the claim model over a window; false stops
// the answer. PII wins over a medical claim in the same window: the turn
// is rejected.
func (f *Filter) judge(window string) bool {
	norm := normal(window)
	if ids := piiHits(window, norm, f.name); len(ids) > 0 {
		f.outcome, f.rules = Leak, append(f.rules, ids...)
		return false
	}
	lang := sentenceLanguage(f.opts, window)
	if ids := f.decideClaim(window, norm, lang); len(ids) > 0 {
		f.outcome, f.rules, f.stoppedIn = Blocked, append(f.rules, ids...), lang
		return false
	}
	if ids := prescriptiveHits(norm, lang); len(ids) > 0 {
		f.tone, f.rules = true, append(f.rules, ids...)
	}
	return true
}

// Verdict is the judgement so far; after Close, the answer's.
func (f *Filter) Verdict() Verdict {
	v := Verdict{Outcome: f.outcome, Released: f.released.String(),
		Ran: []string{FilterMedical, FilterPrescriptive, FilterPII}}
	v.Kept = v.Released
	if f.outcome != Pass {
		v.Kept = v.Released[:f.kept]
	}
	v.Rules = slices.Compact(slices.Sorted(slices.Values(f.rules)))
	v.Judged = slices.Clone(f.judged)
	if f.outcome == Blocked {
		v.Fallback = f.Fallback()
		v.Flags = append(v.Flags, Flag{Type: MedicalClaim, Blocked: true,
			Message: "Part of the answer read as medical advice and was replaced."})
	}
	if f.tone {
		v.Flags = append(v.Flags, Flag{Type: PrescriptiveTone,
			Message: "The answer tells the user what they must do; treat it as a suggestion."})
	}
	return v
}

// CheckText judges a whole text: the stream filter run over it in one write,
// so its verdict is the one any chunking of the text gets.
func CheckText(text string, o Options) Verdict {
	f := NewFilter(o)
	f.Write(text)
	f.Close()
	return f.Verdict()
}

// JSONText is the text of a JSON value the filters check: its string
// values, one per line, so each is its own piece. Keys are left out: they
// are the tool's schema, named by the app, and a list of names such as
// "current_supplements" read as a sentence looked like a claim to the
// claim model (the WellTrack example's supplements workflow was refused).
// Numbers are left out too: an argument's number is a quantity or an id,
// which the phone rule's context words could not tell. Text that is not
// JSON is checked as it is.
func JSONText(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		}
	}
	walk(v)
	return b.String()
}
