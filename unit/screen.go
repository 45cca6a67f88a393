package unit

import (
	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
)

// Screen is the output filter on the answer to a conversation the client
// keeps (a completion, a response; DESIGN §12, docs/safety.md): the same
// stream filter as a chat turn's, streamed or whole. The endpoints know
// no profile, so it looks for emails and phone numbers, not a display
// name. A blocked claim ends the text with the fallback, once, in the
// claim's language; personal data fails the answer with AI_PII_LEAK.
type Screen struct {
	f        *safety.Filter
	fellBack bool
}

// NewScreen is a screen for one answer, asking j (nil: no judge).
func (e *Env) NewScreen(j *judge.Judge) *Screen {
	return &Screen{f: safety.NewFilter(e.Judged(safety.Options{}, j))}
}

// Write takes a delta of the answer and returns the text to send now.
func (a *Screen) Write(delta string) (string, error) { return a.verdict(a.f.Write(delta)) }

// Close ends the answer and returns the rest of the text to send.
func (a *Screen) Close() (string, error) { return a.verdict(a.f.Close()) }

// Whole judges a whole answer at once and returns the text to send.
// Nothing went out before the verdict, so a blocked answer keeps only the
// whole sentences before the claim (Verdict.Kept), then the fallback.
func (a *Screen) Whole(text string) (string, error) {
	a.f.Write(text)
	a.f.Close()
	v := a.f.Verdict()
	if _, err := a.verdict(""); err != nil {
		return "", err
	}
	if v.Outcome == safety.Blocked {
		return v.Kept + v.Fallback, nil
	}
	return v.Released, nil
}

func (a *Screen) verdict(out string) (string, error) {
	switch a.f.Outcome() {
	case safety.Leak:
		return "", apierr.New(apierr.AIPIILeak, "")
	case safety.Blocked:
		if !a.fellBack {
			a.fellBack = true
			out += a.f.Fallback()
		}
	}
	return out, nil
}

// Audit is the verdict as the unit's audit row has it: the filters that
// ran (the client's user text sanitized, then the output filters over
// the whole answer), the ids of their rules that fired, and whether a
// medical claim was blocked.
func (a *Screen) Audit() (ran, rules []string, blocked bool) {
	v := a.f.Verdict()
	return append([]string{audit.FilterInput}, v.Ran...), v.Rules, v.Outcome == safety.Blocked
}
