package sse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/page"
	"github.com/voxgate/voxgate/quota"
)

// HandleChat serves POST /v1/chat (DESIGN §7). Errors found before the
// stream starts are JSON with their status; once the session event is
// sent, a failure is one error event and the stream ends without done.
func (s *Service) HandleChat(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	var req Request
	if err := httpx.Decode(r, &req, httpx.DecodeOptions{MaxBytes: maxBody}); err != nil {
		return err
	}
	if err := req.normalize(); err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" {
		if err := checkKey(key); err != nil {
			return err
		}
		stored, err := s.claimKey(r.Context(), p.UserID, key)
		if err != nil {
			return err
		}
		if stored != nil {
			return s.replay(w, r, &req, stored)
		}
	}
	t, err := s.begin(r.Context(), p, &req)
	if err != nil {
		if key != "" {
			s.dropKey(r.Context(), p.UserID, key)
		}
		return err
	}
	t.key = key
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.TurnTimeout)
	defer cancel()
	if !req.streaming() {
		t.out = discard{}
		raw, err := t.run(ctx)
		if err != nil {
			if key != "" {
				s.dropKey(ctx, p.UserID, key)
			}
			return err
		}
		writeRaw(w, raw)
		return nil
	}
	return s.stream(ctx, w, r, t)
}

// begin admits the turn: the workflow and a confirmation are checked
// before admission (a refused request counts nothing), then the quota
// ticket, the session and the confirmation's one use.
func (s *Service) begin(ctx context.Context, p auth.Principal, req *Request) (*turn, error) {
	if req.Workflow != "" {
		if _, ok := s.tools.Registry().Lookup(req.Workflow); !ok {
			return nil, apierr.New(apierr.ToolNotFound, "")
		}
	}
	if req.Confirm != nil {
		pp, err := s.peekPending(ctx, p.UserID, req.Confirm.CallID)
		if err != nil {
			return nil, err
		}
		if req.SessionID != "" && req.SessionID != pp.SessionID {
			return nil, apierr.New(apierr.NotFound, "That confirmation is not available any more.")
		}
		req.SessionID = pp.SessionID
	}
	ticket, err := s.quota.Admit(ctx, p, s.estimate())
	if err != nil {
		return nil, err
	}
	t := &turn{s: s, p: p, req: req, ticket: ticket, turnID: newID("turn_"), started: time.Now()}
	release := func(err error) (*turn, error) {
		t.release(ctx)
		return nil, err
	}
	if req.Workflow != "" {
		if tool, _ := s.tools.Registry().Lookup(req.Workflow); !tool.AllowsPlan(ticket.Plan) {
			return release(apierr.New(apierr.ToolNotAllowed, "That action isn't included in your plan."))
		}
	}
	if t.sessionID, t.fresh, err = s.ensureSession(ctx, p.UserID, req.SessionID); err != nil {
		return release(err)
	}
	if req.Confirm != nil {
		if t.sessionID != req.SessionID {
			return release(apierr.New(apierr.NotFound, "That confirmation is not available any more."))
		}
		pp, err := s.takePending(ctx, p.UserID, req.Confirm.CallID)
		if err != nil {
			return release(err)
		}
		t.confirm = &pp
	}
	return t, nil
}

// estimate is what a turn reserves: EstimateTokens, priced as input at the
// model's rates (an upper bound for most turns; settlement reconciles).
func (s *Service) estimate() quota.Estimate {
	cost, err := s.ledger.Prices().Cost(billing.Line{Model: s.cfg.Model, Usage: billing.Usage{TextIn: s.cfg.EstimateTokens}})
	if err != nil {
		cost = 0
	}
	return quota.Estimate{Tokens: s.cfg.EstimateTokens, CostMicros: cost, Calls: 1}
}

// stream runs the turn as an event stream.
func (s *Service) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, t *turn) error {
	wr, err := NewWriter(w, r)
	if err != nil {
		t.out = discard{}
		return t.fail(ctx, apierr.Wrap(apierr.Internal, "", err))
	}
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()
	defer wr.Close()
	stopPing := wr.KeepAlive(ctx, s.pingEvery)
	defer stopPing()
	t.out = writerSink{wr}
	if err := wr.Send("session", map[string]string{"session_id": t.sessionID}); err != nil {
		return t.fail(ctx, ctxError(ctx, err))
	}
	raw, err := s.runGuarded(ctx, t)
	if err != nil {
		if t.key != "" {
			s.dropKey(ctx, t.p.UserID, t.key)
		}
		s.sendError(r.Context(), wr, err)
		return nil
	}
	_ = wr.Send("stream_complete", nil)
	_ = wr.Send("done", map[string]json.RawMessage{"response": raw})
	return nil
}

// runGuarded runs the turn; a panic outside the turn's own recovery still
// ends the stream with an error event, never a JSON body in the stream.
func (s *Service) runGuarded(ctx context.Context, t *turn) (raw []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = apierr.Wrap(apierr.Internal, "", fmt.Errorf("sse: stream panicked: %v\n%s", p, debug.Stack()))
		}
	}()
	return t.run(ctx)
}

// sendError ends a stream with one error event, logging a server-side
// failure once. ctx is the request's: once it is done the client is gone
// (or the server is shutting down) and nothing can be sent; a turn that
// ran past its own bound still gets its event.
func (s *Service) sendError(ctx context.Context, wr *Writer, err error) {
	e := apierr.From(err)
	switch {
	case ctx.Err() != nil || errors.Is(err, ErrGone):
		httpx.Logger(ctx).Info("chat turn cancelled", "code", e.Code, "cause", context.Cause(ctx))
		return
	case e.Status() >= 500 && e.Err != nil:
		httpx.Logger(ctx).Error("chat turn failed", "code", e.Code, "err", e.Err)
	}
	body := map[string]any{"code": e.Code, "message": e.Message}
	if e.RetryAfter > 0 {
		body["retry_after_s"] = e.RetryAfter
	}
	_ = wr.Send("error", body)
}

type writerSink struct{ w *Writer }

func (s writerSink) send(event string, v any) error { return s.w.Send(event, v) }

// replay answers a retried request with its stored final response: as
// JSON, or as a short stream.
func (s *Service) replay(w http.ResponseWriter, r *http.Request, req *Request, raw json.RawMessage) error {
	if !req.streaming() {
		writeRaw(w, raw)
		return nil
	}
	var resp Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return apierr.Wrap(apierr.Internal, "", err)
	}
	wr, err := NewWriter(w, r)
	if err != nil {
		return apierr.Wrap(apierr.Internal, "", err)
	}
	defer wr.Close()
	_ = wr.Send("session", map[string]string{"session_id": resp.SessionID})
	if resp.Message != "" {
		_ = wr.Send("content", map[string]string{"content": resp.Message})
	}
	_ = wr.Send("stream_complete", nil)
	_ = wr.Send("done", map[string]json.RawMessage{"response": raw})
	return nil
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
