package sse

import (
	"context"
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
