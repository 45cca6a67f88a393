package responses

import (
	"context"

	"github.com/voxgate/voxgate/unit"
)

// newScreen is the output filter on the response's text (unit.Screen), as
// on a completion, with the exchange's judge.
func (x *exchange) newScreen(ctx context.Context) *unit.Screen {
	if x.judge == nil {
		x.judge = x.s.env.JudgeFor(ctx)
	}
	return x.s.env.NewScreen(x.judge)
}

// judged records the answer's verdict for the audit row.
func (x *exchange) judged(a *unit.Screen) {
	x.audit.ran, x.audit.rules, x.audit.blocked = a.Audit()
}
