package unit

import (
	"context"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// CutWatch tells a stream's client why its stream ends when the server
// cuts the request: a shutdown past its timeout cancels requests with
// server.ErrShuttingDown and leaves their connections open for about a
// second, so the error goes out at that moment, before the work records
// its usage (which may take longer than the connection lives), and an app
// can tell a restart (retry soon) from a network drop. Both streams use
// it, each saying the error in its own form: /v1/chat's error event,
// /v1/chat/completions' in-stream error object. The hook is the request
// context's cause, which the server already sets; httpx.ClientGone tells
// a cut from a client that left, who is told nothing.
type CutWatch struct {
	ctx  context.Context // the request's
	say  func(*apierr.Error)
	stop func() bool
}

// WatchCut watches ctx, a request's context, for the rest of a stream's
// work; say writes the stream's last line (it runs on its own goroutine,
// beside the work's writes, so it must be safe beside them: Writer's
// SendLast and DataLast are).
func WatchCut(ctx context.Context, say func(*apierr.Error)) *CutWatch {
	c := &CutWatch{ctx: ctx, say: say}
	c.stop = context.AfterFunc(ctx, c.tell)
	return c
}

func (c *CutWatch) tell() {
	if !httpx.ClientGone(c.ctx) {
		c.say(c.Reason())
	}
}

// Reason is what a cut request is told: UNAVAILABLE with retry advice.
func (c *CutWatch) Reason() *apierr.Error { return apierr.From(CtxError(c.ctx, nil)) }

// Over ends the watch once the work is over. It reports whether the
// request ended first: the client left, or the server cut it and was
// told why; either way nothing more is written.
func (c *CutWatch) Over() bool {
	stopped := c.stop()
	if c.ctx.Err() == nil {
		return false
	}
	if stopped {
		c.tell() // it ended just as the work did, before the hook could start
	}
	return true
}

// Stop ends the watch without a word: the stream is being closed by its
// own work.
func (c *CutWatch) Stop() { c.stop() }

// Context is the watched request's context.
func (c *CutWatch) Context() context.Context { return c.ctx }
