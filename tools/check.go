package tools

import (
	"context"

	"github.com/voxgate/voxgate/internal/apierr"
)

// Check validates c as Execute would, without running it or recording it:
// the tool exists, the session kind and plan may use it, and the arguments
// pass its schema. It returns the tool and the canonical arguments. The
// confirmation tier is not checked: chat checks a standard or elevated
// call precisely to store it until the user confirms it (DESIGN §7), and
// Execute checks everything again when it runs.
func (e *Executor) Check(ctx context.Context, c Call) (*Tool, []byte, error) {
	t, ok := e.reg.Lookup(c.Name)
	if !ok {
		return nil, nil, apierr.New(apierr.ToolNotFound, "")
	}
	if err := checkCall(&c); err != nil {
		return nil, nil, err
	}
	if c.SessionKind == KindVoice && !t.Voice {
		return nil, nil, apierr.New(apierr.ToolNotAllowed, "That action isn't available in voice.")
	}
	plan := c.Plan
	if plan == "" {
		var err error
		if plan, _, err = e.plans.PlanFor(ctx, c.Principal); err != nil {
			return nil, nil, err
		}
	}
	if !t.AllowsPlan(plan) {
		return nil, nil, apierr.New(apierr.ToolNotAllowed, "That action isn't included in your plan.")
	}
	v, args, err := parseArguments(c.Arguments, e.maxArgs)
	if err != nil {
		return nil, nil, err
	}
	if err := validate(t, v); err != nil {
		return nil, nil, err
	}
	return t, args, nil
}
