package chat

import (
	"net/http"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/sse"
	"github.com/voxgate/voxgate/unit"
)

// stream is a turn's event stream. It opens at the turn's first event
// (session), so a failure before it (auth, validation, quota) is still the
// request's JSON answer (DESIGN §7).
type stream struct {
	s  *Service
	w  http.ResponseWriter
	r  *http.Request
	wr *sse.Writer // nil until the first event
	// stop ends the keep-alive pings and the watch for a server's cut.
	stop func()
	cut  *unit.CutWatch
}

// Send sends one event, opening the stream at the first.
func (st *stream) Send(event string, v any) error {
	if st.wr != nil {
		return st.wr.Send(event, v)
	}
	wr, err := sse.NewWriter(st.w, st.r)
	if err != nil {
		return apierr.Wrap(apierr.Internal, "", err)
	}
	st.wr = wr
	st.s.metrics.streams.Inc()
	stopPing := wr.KeepAlive(st.r.Context(), st.s.pingEvery)
	// A server's cut gets one error event at once (unit/cut.go). The turn,
	// cancelled too, goes on to record its usage; nothing else is sent.
	st.cut = unit.WatchCut(st.r.Context(), func(e *apierr.Error) { _ = wr.SendLast("error", errorEvent(e)) })
	st.stop = func() {
		st.cut.Stop()
		stopPing()
		wr.Close()
		st.s.metrics.streams.Dec()
	}
	if err := wr.Send(event, v); err != nil {
		return unit.CtxError(st.r.Context(), err)
	}
	return nil
}
