package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/capacity"
)

// The chat case of voxgate bench (--mode chat): streamed POST /v1/chat
// turns, each in a new session, timed to their first content event. The
// turn calls the same mock upstream, so the figures are what a chat turn
// costs the gateway and PostgreSQL beside the completions cases; its
// direct baseline is the mock's own completion.

// runChat sends l as streamed chat turns to t (a /v1/chat URL). A turn
// that is not a 200 ending in its done event is counted, not timed.
func runChat(ctx context.Context, client *http.Client, t capacity.Target, l capacity.Load) capacity.Result {
	return capacity.RunWith(ctx, l, func(ctx context.Context, c, n int) (time.Duration, error) {
		body := fmt.Sprintf(`{"message":"Suggest a quick lunch, please (%d.%d).","stream":true}`, c, n)
		return timeEvents(ctx, client, t, c, body, "content", "done")
	})
}
