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
		stored, err := s.claimKey(r.Context(), p.UserID, key, req.fingerprint())
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
		if err := s.checkWorkflow(ctx, p, req.Workflow); err != nil {
			return nil, err
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
		// The plan may have changed since checkWorkflow read it.
		if tool, _ := s.tools.Registry().Lookup(req.Workflow); !tool.AllowsPlan(ticket.Plan) {
			return release(errWorkflowNotInPlan())
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

func errWorkflowNotInPlan() error {
	return apierr.New(apierr.ToolNotAllowed, "That action isn't included in your plan.")
}

// checkWorkflow refuses a workflow that names no tool, or one the caller's
// plan may not use. It runs before admission, so the refusal counts
// nothing against the request windows (DESIGN §9).
func (s *Service) checkWorkflow(ctx context.Context, p auth.Principal, name string) error {
	tool, ok := s.tools.Registry().Lookup(name)
	if !ok {
		return apierr.New(apierr.ToolNotFound, "")
	}
	plan, _, err := s.quota.PlanFor(ctx, p)
	if err != nil {
		return err
	}
	if !tool.AllowsPlan(plan) {
		return errWorkflowNotInPlan()
	}
	return nil
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
	// A shutdown past its timeout cancels the request while its connection
	// is still open: the client gets one error event at once, so it can
	// tell a restart (retry soon) from a network drop. The turn, cancelled
	// too, goes on to record its usage; nothing else is sent.
	sayCut := func() {
		if !httpx.ClientGone(r.Context()) {
			_ = wr.SendLast("error", errorEvent(apierr.From(ctxError(r.Context(), nil))))
		}
	}
	cut := context.AfterFunc(r.Context(), sayCut)
	defer cut()
	if err := wr.Send("session", map[string]string{"session_id": t.sessionID}); err != nil {
		return t.fail(ctx, ctxError(ctx, err))
	}
	raw, err := s.runGuarded(ctx, t)
	if err != nil && t.key != "" {
		s.dropKey(ctx, t.p.UserID, t.key)
	}
	if stopped := cut(); r.Context().Err() != nil {
		// The request ended first: the client left, or the server cut it
		// and the error event went out. Nothing more does.
		if stopped {
			sayCut() // it ended just as the turn did, before its hook could start
		}
		httpx.Logger(r.Context()).InfoContext(r.Context(), "chat turn cancelled", "cause", context.Cause(r.Context()))
		return nil
	}
	if err != nil {
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
// failure once. ctx is the request's: once it is done nothing more is sent
// (stream has answered a server's cut already); a turn that ran past its
// own bound still gets its event.
func (s *Service) sendError(ctx context.Context, wr *Writer, err error) {
	e := apierr.From(err)
	switch {
	case ctx.Err() != nil || errors.Is(err, ErrGone):
		httpx.Logger(ctx).InfoContext(ctx, "chat turn cancelled", "code", e.Code, "cause", context.Cause(ctx))
		return
	case e.Status() >= 500 && e.Err != nil:
		httpx.Logger(ctx).ErrorContext(ctx, "chat turn failed", "code", e.Code, "err", e.Err)
	}
	_ = wr.Send("error", errorEvent(e))
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
