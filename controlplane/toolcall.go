package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/tools"
)

// MaxToolCallBytes caps a tool-call body (DESIGN §6), checked before it is
// parsed.
const MaxToolCallBytes = 10 * 1024

// ToolCallRequest is the body of POST /v1/voice/sessions/{id}/tool-calls:
// a function call as the provider sent it to the app.
type ToolCallRequest struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Arguments is a JSON string holding an object (as the provider sends
	// it) or the object itself.
	Arguments json.RawMessage `json:"arguments"`
}

// takeToolSlot admits one tool call of the session in one statement: the
// session must be the user's, open and within its reservation, and under
// the per-minute cap, which counts by the database clock so every replica
// shares one window; and the call must come by the session's own path
// ($4): an app posts calls for a direct session only, since in sideband
// mode the gateway reads them off the call itself and an app-posted call
// would be one the model never made. It returns the session's plan, so the
// executor needs no plan lookup. A refused call counts nothing.
const takeToolSlotSQL = `UPDATE voice_sessions SET
	tool_calls = CASE WHEN tool_minute = date_trunc('minute', now()) THEN tool_calls + 1 ELSE 1 END,
	tool_minute = date_trunc('minute', now())
WHERE id = $1 AND user_id = $2 AND ended_at IS NULL AND expires_at > now()
	AND (tool_minute <> date_trunc('minute', now()) OR tool_calls < $3) AND mode = $4
RETURNING plan, coalesce(language, ''), trace_parent`

// refusalSQL says why takeToolSlot refused: no such session of this user
// (no row), ended, another path's session, or the seconds left in the
// minute.
const refusalSQL = `SELECT ended_at IS NOT NULL OR expires_at <= now(), mode,
	extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now())
FROM voice_sessions WHERE id = $1 AND user_id = $2`

// ExecuteTool runs one of the model's function calls in p's session id,
// on the server, through the shared executor (allowlist, schema, timeout,
// exactly once per call_id).
func (s *Service) ExecuteTool(ctx context.Context, p auth.Principal, id string, req ToolCallRequest) (tools.Result, error) {
	if !validSessionID(id) {
		return tools.Result{}, notFound(nil)
	}
	if req.Name == "" {
		return tools.Result{}, apierr.New(apierr.InvalidRequest, "name is required.")
	}
	if len(req.CallID) > 128 {
		return tools.Result{}, apierr.New(apierr.InvalidRequest, "call_id is too long.")
	}
	return s.runTool(ctx, p, id, ModeDirect, req)
}

// runTool admits one tool call of session id under the per-minute cap and
// runs it through the executor with the session's plan; source is the
// path it came by (direct: the app forwarded it; sideband: the gateway
// read it off the call).
func (s *Service) runTool(ctx context.Context, p auth.Principal, id, source string, req ToolCallRequest) (tools.Result, error) {
	var plan, language, tp string
	err := s.pool.QueryRow(ctx, takeToolSlotSQL, id, p.UserID, s.cfg.ToolCallsPerMinute, source).Scan(&plan, &language, &tp)
	if errors.Is(err, pgx.ErrNoRows) {
		s.metrics.toolCalls.WithLabelValues("refused").Inc()
		return tools.Result{}, s.toolRefusal(ctx, p.UserID, id, source)
	}
	if err != nil {
		return tools.Result{}, database.Error("controlplane: tool call", err)
	}
	ctx, span, traced := toolInSession(ctx, tp, id, source)
	res, err := s.runAdmitted(ctx, p, id, source, plan, language, req)
	if traced {
		endSpan(span, err)
	}
	return res, err
}

// runAdmitted runs a tool call runTool admitted.
func (s *Service) runAdmitted(ctx context.Context, p auth.Principal, id, source, plan, language string, req ToolCallRequest) (tools.Result, error) {
	args := []byte(req.Arguments)
	if len(args) == 0 {
		args = []byte(`{}`)
	}
	if req.CallID == "" {
		// Minted here rather than by the executor, so the audit row and
		// the tool_calls row name the same call.
		req.CallID = tools.NewCallID()
	}
	row, err := s.beginToolAudit(ctx, p, id, req, args) // the call is admitted: its audit row is pending
	if err != nil {
		return tools.Result{}, err
	}
	res, err := s.tools.Execute(ctx, tools.Call{
		SessionID: id, SessionKind: tools.KindVoice, Source: source, CallID: req.CallID,
		Name: req.Name, Arguments: args, Principal: p, Plan: plan,
		Language: language, // the session's language; "" has the screen detect it
	})
	s.finishToolAudit(ctx, row, res, err)
	switch {
	case err != nil:
		s.metrics.toolCalls.WithLabelValues("refused").Inc()
	case res.Replayed:
		s.metrics.toolCalls.WithLabelValues("replayed").Inc()
	case res.Error != nil:
		s.metrics.toolCalls.WithLabelValues("tool_error").Inc()
	default:
		s.metrics.toolCalls.WithLabelValues("ok").Inc()
	}
	return res, err
}

func (s *Service) toolRefusal(ctx context.Context, userID, id, source string) error {
	var ended bool
	var mode string
	var left float64
	err := s.pool.QueryRow(ctx, refusalSQL, id, userID).Scan(&ended, &mode, &left)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound(err)
	case err != nil:
		return database.Error("controlplane: tool call refusal", err)
	case ended:
		return apierr.New(apierr.SessionEnded, "")
	case mode != source:
		return apierr.New(apierr.Conflict, "The gateway runs this session's tools itself; there is nothing to post.")
	}
	return apierr.New(apierr.RateLimited, "").WithRetry(int(math.Ceil(left)))
}
