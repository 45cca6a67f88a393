package completions

import (
	"context"

	"github.com/voxgate/voxgate/unit"
)

// newAnswerScreen is the output filter on the completion's text
// (unit.Screen), with the completion's judge.
func (c *completion) newAnswerScreen(ctx context.Context) *unit.Screen {
	if c.judge == nil {
		c.judge = c.s.env.JudgeFor(ctx)
	}
	return c.s.env.NewScreen(c.judge)
}

// judged records the answer's verdict for the audit row.
func (c *completion) judged(a *unit.Screen) {
	c.audit.ran, c.audit.rules, c.audit.blocked = a.Audit()
}
