package sse

import (
	"context"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/safety"
)

// answerScreen is the output filter on a completion's text (DESIGN §12,
// docs/safety.md): the same stream filter as a chat turn's, streamed or
// whole. The endpoint knows no profile, so it looks for emails and phone
// numbers, not a display name. A blocked claim ends the text with the
// fallback, once; personal data fails the answer with AI_PII_LEAK.
type answerScreen struct {
	f        *safety.Filter
	fellBack bool
}

func (c *completion) newAnswerScreen(ctx context.Context) *answerScreen {
	if c.judge == nil {
		c.judge = c.s.judgeFor(ctx)
	}
	return &answerScreen{f: safety.NewFilter(c.s.judged(safety.Options{}, c.judge))}
}

// write takes a delta of the answer and returns the text to send now.
func (a *answerScreen) write(delta string) (string, error) {
	return a.verdict(a.f.Write(delta))
}

// close ends the answer and returns the rest of the text to send.
func (a *answerScreen) close() (string, error) {
	return a.verdict(a.f.Close())
}

// whole judges a whole answer at once and returns the text to send. Nothing
// went out before the verdict, so a blocked answer keeps only the whole
// sentences before the claim (Verdict.Kept), then the fallback.
func (a *answerScreen) whole(text string) (string, error) {
	a.f.Write(text)
	a.f.Close()
	v := a.f.Verdict()
	if _, err := a.verdict(""); err != nil {
		return "", err
	}
	if v.Outcome == safety.Blocked {
		return v.Kept + safety.Fallback, nil
	}
	return v.Released, nil
}

func (a *answerScreen) verdict(out string) (string, error) {
	switch a.f.Outcome() {
	case safety.Leak:
		return "", apierr.New(apierr.AIPIILeak, "")
	case safety.Blocked:
		if !a.fellBack {
			a.fellBack = true
			out += safety.Fallback
		}
	}
	return out, nil
}

// judged records the answer's verdict for the audit row: the filters that
// ran (the client's user text sanitized, then the output filters over the
// whole answer) and the ids of their rules that fired.
func (c *completion) judged(a *answerScreen) {
	v := a.f.Verdict()
	c.audit.ran = append([]string{audit.FilterInput}, v.Ran...)
	c.audit.rules = v.Rules
	c.audit.blocked = v.Outcome == safety.Blocked
}
