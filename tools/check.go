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
	_, args, err := e.admit(ctx, t, &c, true)
	if err != nil {
		return nil, nil, err
	}
	return t, args, nil
}
