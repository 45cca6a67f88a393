package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/page"
	"github.com/voxgate/voxgate/sse"
)

// HandleChat serves POST /v1/chat (DESIGN §7): it decodes and authorises
// the request, and answers the turn (turn.go) as an event stream or, with
// "stream": false, as JSON. Errors found before the stream starts are JSON
// with their status; once the session event is sent, a failure is one
// error event and the stream ends without done.
func (s *Service) HandleChat(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	req, key, err := decodeChat(r)
	if err != nil {
		return err
	}
	if !req.streaming() {
		raw, err := s.chat(r.Context(), p, req, key, discard{})
		if err != nil {
			return err
		}
		writeRaw(w, raw)
		return nil
	}
	st := &stream{s: s, w: w, r: r}
	raw, err := s.chatGuarded(r.Context(), p, req, key, st)
	return st.end(raw, err)
}

// chatGuarded runs the turn for a stream: a panic outside the turn's own
// recovery still ends the stream with an error event, never a JSON body in
// the stream.
func (s *Service) chatGuarded(ctx context.Context, p auth.Principal, req *Request, key string, st *stream) (raw []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = apierr.Wrap(apierr.Internal, "", fmt.Errorf("chat: stream panicked: %v\n%s", p, debug.Stack()))
		}
	}()
	return s.chat(ctx, p, req, key, st)
}

// end ends the stream after the turn: done with the final response, or
// one error event. A stream that never opened answers err as JSON.
func (st *stream) end(raw []byte, err error) error {
	if st.wr == nil {
		return err
	}
	defer st.stop()
	ctx := st.r.Context()
	if st.cut.Over() {
		// The request ended first: the client left, or the server cut it
		// and the error event went out. Nothing more does.
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
	case ctx.Err() != nil || errors.Is(err, sse.ErrGone):
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

func writeRaw(w http.ResponseWriter, raw []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(raw, '\n'))
}

// HandleList serves GET /v1/chat/sessions: the caller's own, newest first.
func (s *Service) HandleList(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	req, err := page.Parse(r)
	if err != nil {
		return err
	}
	list, err := s.ListSessions(r.Context(), p.UserID, req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// HandleMessages serves GET /v1/chat/sessions/{id}/messages.
func (s *Service) HandleMessages(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	msgs, err := s.Messages(r.Context(), p.UserID, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"session_id": r.PathValue("id"), "items": msgs})
	return nil
}

// HandleDelete serves DELETE /v1/chat/sessions/{id}.
func (s *Service) HandleDelete(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	if err := s.DeleteSession(r.Context(), p.UserID, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
