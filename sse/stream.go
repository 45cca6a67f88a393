package sse

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// stream is a turn's event stream. It opens at the turn's first event
// (session), so a failure before it (auth, validation, quota) is still the
// request's JSON answer (DESIGN §7).
type stream struct {
	s  *Service
	w  http.ResponseWriter
	r  *http.Request
	wr *Writer // nil until the first event
	// stop ends the keep-alive pings and the shutdown hook; cut stops the
	// hook alone, reporting whether it had not run.
	stop func()
	cut  func() bool
}

// Send sends one event, opening the stream at the first.
func (st *stream) Send(event string, v any) error {
	if st.wr != nil {
		return st.wr.Send(event, v)
	}
	wr, err := NewWriter(st.w, st.r)
	if err != nil {
		return apierr.Wrap(apierr.Internal, "", err)
	}
	st.wr = wr
	st.s.metrics.streams.Inc()
	stopPing := wr.KeepAlive(st.r.Context(), st.s.pingEvery)
	// A shutdown past its timeout cancels the request while its connection
	// is still open: the client gets one error event at once, so it can
	// tell a restart (retry soon) from a network drop. The turn, cancelled
	// too, goes on to record its usage; nothing else is sent.
	st.cut = context.AfterFunc(st.r.Context(), st.sayCut)
	st.stop = func() {
		st.cut()
		stopPing()
		wr.Close()
		st.s.metrics.streams.Dec()
	}
	if err := wr.Send(event, v); err != nil {
		return ctxError(st.r.Context(), err)
	}
	return nil
}

func (st *stream) sayCut() {
	if !httpx.ClientGone(st.r.Context()) {
		_ = st.wr.SendLast("error", errorEvent(apierr.From(ctxError(st.r.Context(), nil))))
	}
}

// end ends the stream after the turn: done with the final response, or
// one error event. A stream that never opened answers err as JSON.
func (st *stream) end(raw []byte, err error) error {
	if st.wr == nil {
		return err
	}
	defer st.stop()
	ctx := st.r.Context()
	if stopped := st.cut(); ctx.Err() != nil {
		// The request ended first: the client left, or the server cut it
		// and the error event went out. Nothing more does.
		if stopped {
			st.sayCut() // it ended just as the turn did, before its hook could start
		}
		httpx.Logger(ctx).InfoContext(ctx, "chat turn cancelled", "cause", context.Cause(ctx))
		return nil
	}
	if err != nil {
		st.sendError(err)
		return nil
	}
	_ = st.wr.Send("stream_complete", nil)
	_ = st.wr.Send("done", map[string]json.RawMessage{"response": raw})
	return nil
}

// sendError ends a stream with one error event, logging a server-side
// failure once. Once the request is done nothing more is sent (end has
// answered a server's cut already); a turn that ran past its own bound
// still gets its event.
func (st *stream) sendError(err error) {
	ctx := st.r.Context()
	e := apierr.From(err)
	switch {
	case ctx.Err() != nil || errors.Is(err, ErrGone):
		httpx.Logger(ctx).InfoContext(ctx, "chat turn cancelled", "code", e.Code, "cause", context.Cause(ctx))
		return
	case e.Status() >= 500 && e.Err != nil:
		httpx.Logger(ctx).ErrorContext(ctx, "chat turn failed", "code", e.Code, "err", e.Err)
	}
	_ = st.wr.Send("error", errorEvent(e))
}

// errorEvent is the error event's data: the §5 code and message, and the
// retry advice when there is some.
func errorEvent(e *apierr.Error) map[string]any {
	body := map[string]any{"code": e.Code, "message": e.Message}
	if e.RetryAfter > 0 {
		body["retry_after_s"] = e.RetryAfter
	}
	return body
}
