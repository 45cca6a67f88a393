package httpx

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/voxgate/voxgate/internal/apierr"
)

// WatchBody makes r's body remember a read cut off by the connection's
// read deadline (the server's body deadline). net/http then cancels the
// request's context as if the client had gone; the client is still there,
// waiting, and is owed a 408. Error answers that whatever the handler made
// of the failed read, so every route (JSON, raw bodies, streams) answers
// it the same way. Call it where the deadline is set.
func WatchBody(r *http.Request) *http.Request {
	ri, ok := r.Context().Value(ctxKey{}).(*reqInfo)
	if !ok {
		ri = &reqInfo{log: slog.Default()}
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, ri))
	}
	r.Body = &watchedBody{ReadCloser: r.Body, ri: ri}
	return r
}

type watchedBody struct {
	io.ReadCloser
	ri *reqInfo
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		b.ri.bodyLate.Store(true)
	}
	return n, err
}

// BodyTimedOut reports whether reading the body of ctx's request ran past
// its deadline.
func BodyTimedOut(ctx context.Context) bool {
	ri, ok := ctx.Value(ctxKey{}).(*reqInfo)
	return ok && ri.bodyLate.Load()
}

func errBodyTimedOut(err error) error {
	return apierr.Wrap(apierr.RequestTimeout, "The request body did not arrive in time.", err)
}
