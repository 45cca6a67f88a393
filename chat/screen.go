package chat

import (
	"context"
	"slices"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/safety"
)

// The output filters of DESIGN §12 on a chat turn (docs/safety.md). The
// model's text passes the turn's stream filter (t.screen, made with the
// profile in context.go) before any of it is a content event; a stream:
// false request runs the same code, its events dropped, so both get one
// verdict. Tool arguments and card text pass the same rules in the
// executor, where every tool call passes (tools/screen.go).

// Text passes a delta of the answer through the output filter and sends
// what it lets out.
func (t *turn) Text(ctx context.Context, delta string) error {
	if t.s.unfiltered.Load() {
		return t.say(delta)
	}
	return t.letOut(t.screen.Write(delta))
}

// closeScreen ends the model's text: the filter lets out what it held.
// The turn's end calls it, and degraded mode before its own message.
func (t *turn) closeScreen() error {
	return t.letOut(t.screen.Close())
}

// letOut sends text the filter let out, then acts on its verdict: after
// a blocked claim the fallback goes out, once; personal data ends the turn
// with AI_PII_LEAK, and nothing more of the answer is sent or kept.
func (t *turn) letOut(text string) error {
	if text != "" {
		if err := t.say(text); err != nil {
			return err
		}
	}
	switch t.screen.Outcome() {
	case safety.Leak:
		t.judgedAnswer() // the audit row says which filters ran and what they found
		return errPIILeak()
	case safety.Blocked:
		if !t.fellBack {
			t.fellBack = true
			return t.say(t.screen.Fallback())
		}
	}
	return nil
}

// say sends one content event. The answer's message is every content
// event's text, in order (DESIGN §7).
func (t *turn) say(text string) error {
	t.text += text
	return t.out.Send("content", map[string]string{"content": text})
}

func errPIILeak() error {
	return apierr.New(apierr.AIPIILeak, "")
}

// screened keeps the rule ids a check matched, for the audit row: the
// answer's, and the executor's screen of a call's arguments and cards.
func (t *turn) screened(rules []string) {
	t.rules = slices.Compact(slices.Sorted(slices.Values(append(t.rules, rules...))))
}

// judgedAnswer is the answer's verdict, which the audit row records once:
// the output filters that ran over the whole answer (medical,
// prescriptive, pii, after admission's input) and their rule ids. A turn
// that fails before its text is judged ran none of them.
func (t *turn) judgedAnswer() safety.Verdict {
	v := t.screen.Verdict()
	if !t.judged && !t.s.unfiltered.Load() {
		t.judged = true
		t.ran = append(t.ran, v.Ran...)
		t.screened(v.Rules)
	}
	return v
}

// flag adds a safety flag to the answer, once.
func (t *turn) flag(f safety.Flag) {
	if !slices.Contains(t.answer.SafetyFlags, f) {
		t.answer.SafetyFlags = append(t.answer.SafetyFlags, f)
	}
}
