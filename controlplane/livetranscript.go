package controlplane

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/voxgate/voxgate/safety"
)

// LiveLine is one utterance of a live session's transcript: who spoke,
// what, and where on the session timeline. Kept in order with the usage
// (observed), so a replica that adopts the session has the conversation a
// delegation's task is read from.
type LiveLine struct {
	Speaker string `json:"speaker"` // "user" or "assistant"
	Text    string `json:"text"`
	StartMS int64  `json:"start_ms"`
	EndMS   int64  `json:"end_ms"`
	// clean is Text sanitized when it was cleanLen bytes long: a line is
	// sanitized once per growth, not at every delegation that reads it.
	clean    string
	cleanLen int
	cleaned  bool
}

// sanitized is the line's text as the backend model may read it.
func (l *LiveLine) sanitized() string {
	if !l.cleaned || l.cleanLen != len(l.Text) {
		l.clean, l.cleanLen, l.cleaned = safety.Sanitize(l.Text), len(l.Text), true
	}
	return l.clean
}

// Transcript bounds: the lines kept, and one line's bytes. The task of a
// delegation is the recent conversation; a session's whole hour is not.
const (
	maxLiveLines     = 200
	maxLiveLineBytes = 4000
)

// addDelta adds one transcript delta: to the speaker's current line when
// the last line is theirs, else as a new line.
func addDelta(lines []LiveLine, speaker, delta string, startMS, endMS int64) []LiveLine {
	if n := len(lines); n > 0 && lines[n-1].Speaker == speaker {
		l := &lines[n-1]
		if len(l.Text)+len(delta) <= maxLiveLineBytes {
			l.Text += delta
		}
		l.EndMS = max(l.EndMS, endMS)
		return lines
	}
	lines = append(lines, LiveLine{Speaker: speaker, Text: strings.TrimLeft(delta, " "), StartMS: startMS, EndMS: endMS})
	if len(lines) > maxLiveLines {
		lines = append(lines[:0], lines[len(lines)-maxLiveLines:]...)
	}
	return lines
}

// taskText renders the conversation up to offsetMS (the delegation's
// place) for the backend model: both speakers, in order, with their
// times. Each line is sanitized (the input filter, DESIGN §12): what the
// user said is data to the model, never its instructions. The lines keep
// their sanitized text for the next delegation.
func taskText(lines []LiveLine, offsetMS int64) string {
	var b strings.Builder
	for i := range lines {
		l := &lines[i]
		if l.StartMS > offsetMS {
			continue
		}
		fmt.Fprintf(&b, "[%.1fs] %s: %s\n", float64(l.StartMS)/1000, l.Speaker, l.sanitized())
	}
	return b.String()
}

// maxCommentBytes bounds a delegation's answer. The API takes at most 500
// tokens of commentary; at its usual four bytes a token this leaves a
// fifth spare. A longer answer is cut at its last sentence end within the
// bound (or its last space), not summarised: a second model call would
// cost more time than the voice has.
const maxCommentBytes = 1600

func clipComment(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxCommentBytes {
		return s
	}
	cut := strings.ToValidUTF8(s[:maxCommentBytes], "") // no rune split in two
	if i := strings.LastIndexAny(cut, ".!?"); i > maxCommentBytes/2 {
		return cut[:i+1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return cut + "…"
}

// validComment is what clipComment promises: valid UTF-8 within the
// bound (its ellipsis included).
func validComment(s string) bool {
	return utf8.ValidString(s) && len(s) <= maxCommentBytes+len("…")
}
