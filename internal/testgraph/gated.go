package testgraph

import (
	"context"

	"github.com/voxgate/voxgate/llm"
)

// Gated is a provider that holds every model call at its start until Gate
// is closed, and says on Entered when one is waiting: a test then acts
// (cuts the database, stops a replica) while a unit is admitted and has
// not yet asked its model.
type Gated struct {
	llm.Provider
	Entered chan struct{}
	Gate    chan struct{}
}

func (g *Gated) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	g.Entered <- struct{}{}
	select {
	case <-g.Gate:
	case <-ctx.Done():
		return nil, &llm.Error{Code: llm.ProviderNetwork, Err: ctx.Err()}
	}
	return g.Provider.Stream(ctx, req)
}
