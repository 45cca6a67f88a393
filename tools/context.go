package tools

import (
	"context"

	"github.com/voxgate/voxgate/safety"
)

// ContextProfile runs the context tool c.Name for c's session and renders
// its result for the model's instructions: only the profile fields the
// model may see, marked as data (safety.ModelProfile), the profile's
// language when it names one, and the user's display name for the output
// filter (safety.ReadProfile). The call takes no arguments and is recorded
// with source "context". No tool named gives no profile. A failed call is
// an error for the caller to log; a session or turn goes on without a
// profile rather than failing because of it.
func (e *Executor) ContextProfile(ctx context.Context, c Call) (safety.Profile, error) {
	if c.Name == "" {
		return safety.Profile{}, nil
	}
	c.Source, c.Arguments = "context", []byte(`{}`)
	r, err := e.Execute(ctx, c)
	if err != nil {
		return safety.Profile{}, err
	}
	if r.Error != nil {
		return safety.Profile{}, r.Error
	}
	return safety.ReadProfile(r.Result), nil
}
