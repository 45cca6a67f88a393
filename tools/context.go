package tools

import (
	"context"

	"github.com/voxgate/voxgate/safety"
)

// ContextProfile runs the context tool c.Name for c's session and renders
// its result for the model's instructions: only the profile fields the
// model may see, marked as data (safety.ModelProfile), and the profile's
// language when it names one. The call takes no arguments and is recorded
// with source "context". No tool named gives no profile. A failed call is
// an error for the caller to log; a session or turn goes on without a
// profile rather than failing because of it.
func (e *Executor) ContextProfile(ctx context.Context, c Call) (block, language string, err error) {
	if c.Name == "" {
		return "", "", nil
	}
	c.Source, c.Arguments = "context", []byte(`{}`)
	r, err := e.Execute(ctx, c)
	if err != nil {
		return "", "", err
	}
	if r.Error != nil {
		return "", "", r.Error
	}
	block, language = safety.ModelProfile(r.Result)
	return block, language, nil
}
