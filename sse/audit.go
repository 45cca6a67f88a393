package sse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// TraceEntry is one attempt of a turn's failover_trace (DESIGN §11): the
// model call it belongs to (1 is the turn's first), the entry
// "<provider>/<model>:<outcome>", the provider's HTTP status (0 when
// none) and how long the attempt took. It never holds provider text.
type TraceEntry struct {
	Call       int    `json:"call"`
	Entry      string `json:"entry"`
	Status     int    `json:"status"`
	DurationMS int64  `json:"duration_ms"`
}

// Audit is a turn's audit row: where its model calls went and how it
// ended. Admins read it (GET /v1/admin/chat/turns/{turn_id}); users never
// see it.
type Audit struct {
	TurnID    string `json:"turn_id"`
	UserID    string `json:"user_id"`
	SessionID string `json:"session_id"`
	Kind      string `json:"kind"`
	Route     string `json:"route"`
	// Provider and Model answered the turn's last answered call; empty
	// when no target answered.
	Provider      string       `json:"provider"`
	Model         string       `json:"model"`
	Status        string       `json:"status"` // ok, confirmation, degraded, cancelled, or a §5 code
	FailoverTrace []TraceEntry `json:"failover_trace"`
	DurationMS    int64        `json:"duration_ms"`
	CreatedAt     time.Time    `json:"created_at,omitzero"`
}

// audit is the turn's audit row, nil when it made no routed call.
func (t *turn) audit(status string) *Audit {
	calls := t.traces.all()
	if len(calls) == 0 {
		return nil
	}
	a := &Audit{TurnID: t.turnID, UserID: t.p.UserID, SessionID: t.sessionID, Kind: billing.KindChat,
		Route: t.s.cfg.Route, Provider: t.provider, Model: t.answerModel, Status: status,
		FailoverTrace: []TraceEntry{}, DurationMS: time.Since(t.started).Milliseconds()}
	for i, tr := range calls {
		for _, at := range tr {
			a.FailoverTrace = append(a.FailoverTrace, TraceEntry{Call: i + 1, Entry: at.String(), Status: at.Status,
				DurationMS: at.Duration.Milliseconds()})
		}
	}
	return a
}

// attemptRecord is a failed attempt's ledger record with its usage, which
// billing.Record's JSON leaves out (the spool keeps the two apart).
type attemptRecord struct {
	Record billing.Record `json:"record"`
	Usage  billing.Usage  `json:"usage"`
}

// attempts are the ledger records of the turn's attempts that failed but
// that their provider reported usage for, and may bill (DESIGN §11):
// kind attempt, turn id "<turn>/<n>" with n the attempt's place in the
// turn's whole trace. The attempt that answered is the chat record's,
// never one of these.
func (t *turn) attempts() []attemptRecord {
	var out []attemptRecord
	n := 0
	for _, tr := range t.traces.all() {
		for _, a := range tr {
			n++
			if a.Answered || a.Usage == nil {
				continue
			}
			u := billing.Usage{TextIn: a.Usage.InputTokens, TextCachedIn: a.Usage.CachedInputTokens,
				TextCacheWriteIn: a.Usage.CacheWriteInputTokens, TextOut: a.Usage.OutputTokens}
			model := a.Model
			if a.Usage.Model != "" {
				model = a.Usage.Model
			}
			out = append(out, attemptRecord{Usage: u, Record: billing.Record{UserID: t.p.UserID, SessionID: t.sessionID,
				TurnID: fmt.Sprintf("%s/%d", t.turnID, n), Kind: billing.KindAttempt, Provider: a.Provider, Model: model,
				DurationMS: a.Duration.Milliseconds(), UsageSource: billing.SourceProviderReported}})
		}
	}
	return out
}

// writeAudit stores a once: a replayed turn end changes nothing.
func writeAudit(ctx context.Context, q billing.Querier, a *Audit) error {
	trace, err := json.Marshal(a.FailoverTrace)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO ai_audit_log
		(turn_id, user_id, session_id, kind, route, provider, model, status, failover_trace, duration_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (turn_id) DO NOTHING`,
		a.TurnID, a.UserID, a.SessionID, a.Kind, a.Route, a.Provider, a.Model, a.Status, trace, a.DurationMS)
	return database.Error("sse: write the turn's audit row", err)
}

// TurnAudit is the audit row of a turn; NOT_FOUND when there is none.
func (s *Service) TurnAudit(ctx context.Context, turnID string) (Audit, error) {
	var a Audit
	var trace []byte
	err := s.pool.QueryRow(ctx, `SELECT turn_id, user_id, session_id, kind, route, provider, model, status,
		failover_trace, duration_ms, created_at FROM ai_audit_log WHERE turn_id = $1`, turnID).
		Scan(&a.TurnID, &a.UserID, &a.SessionID, &a.Kind, &a.Route, &a.Provider, &a.Model, &a.Status,
			&trace, &a.DurationMS, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, apierr.New(apierr.NotFound, "")
	}
	if err != nil {
		return a, database.Error("sse: read a turn's audit row", err)
	}
	if err := json.Unmarshal(trace, &a.FailoverTrace); err != nil {
		return a, apierr.Wrap(apierr.Internal, "", err)
	}
	return a, nil
}

// HandleTurnAudit serves GET /v1/admin/chat/turns/{turn_id} (role admin):
// a turn's route, the target that answered and its failover_trace. The
// turn id is a usage record's turn_id (GET /v1/admin/sessions).
func (s *Service) HandleTurnAudit(w http.ResponseWriter, r *http.Request) error {
	a, err := s.TurnAudit(r.Context(), r.PathValue("turn_id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}
