package chat

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/page"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// Session is a conversation as GET /v1/chat/sessions lists it.
type Session struct {
	ID           string    `json:"id"`
	CreatedAt    time.Time `json:"created_at"`
	LastActiveAt time.Time `json:"last_active_at"`
	MessageCount int       `json:"message_count"`
}

// Message is one stored message, its structured data rehydrated.
type Message struct {
	ID        string    `json:"id"`
	TurnID    string    `json:"turn_id"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	messageData
}

// messageData is a message's structured part, stored as jsonb.
type messageData struct {
	Cards []tools.Card `json:"cards,omitempty"`
	// CardsOmitted counts the cards past MaxCards the turn's calls found.
	CardsOmitted int                 `json:"cards_omitted,omitempty"`
	omitted      map[string]struct{} // the omitted cards, so each counts once
	Actions      []Action            `json:"actions,omitempty"`
	Suggestions  []Suggestion        `json:"suggestions,omitempty"`
	DBWrites     []tools.DBWrite     `json:"db_writes,omitempty"`
	SafetyFlags  []safety.Flag       `json:"safety_flags,omitempty"`
	ToolCalls    []ToolCall          `json:"tool_calls,omitempty"`
	// Confirm is set on a user message that answered a confirmation.
	Confirm *Confirm `json:"confirm,omitempty"`
}

// ToolCall is one call a turn made, as stored with its answer.
type ToolCall struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// State is finished, failed, pending (awaiting confirmation), denied
	// or refused (the executor would not run it).
	State string `json:"state"`
}

func scanMessages(rows pgx.Rows) ([]Message, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Message, error) {
		var m Message
		var data []byte
		if err := r.Scan(&m.ID, &m.TurnID, &m.Role, &m.Content, &data, &m.CreatedAt); err != nil {
			return m, err
		}
		m.CreatedAt = m.CreatedAt.UTC()
		return m, json.Unmarshal(data, &m.messageData)
	})
	if err != nil {
		return nil, database.Error("chat: read messages", err)
	}
	return out, nil
}

// ListSessions is the user's sessions, newest first.
func (s *Service) ListSessions(ctx context.Context, userID string, req page.Request) (page.List[Session], error) {
	after := req.After
	if after.IsZero() {
		after = page.Key{At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), ID: ""}
	}
	rows, err := s.env.Pool.Query(ctx, `SELECT id, created_at, last_active_at, message_count FROM chat_sessions
		WHERE user_id = $1 AND (created_at, id) < ($2, $3)
		ORDER BY created_at DESC, id DESC LIMIT $4`, userID, after.At, after.ID, req.Limit+1)
	if err != nil {
		return page.List[Session]{}, database.Error("chat: list sessions", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Session, error) {
		var x Session
		err := r.Scan(&x.ID, &x.CreatedAt, &x.LastActiveAt, &x.MessageCount)
		x.CreatedAt, x.LastActiveAt = x.CreatedAt.UTC(), x.LastActiveAt.UTC()
		return x, err
	})
	if err != nil {
		return page.List[Session]{}, database.Error("chat: list sessions", err)
	}
	return page.Make(list, req.Limit, func(x Session) page.Key { return page.Key{At: x.CreatedAt, ID: x.ID} }), nil
}

// Messages is a session's whole stored history, oldest first; another
// user's session is NOT_FOUND.
func (s *Service) Messages(ctx context.Context, userID, sessionID string) ([]Message, error) {
	if err := s.owns(ctx, userID, sessionID); err != nil {
		return nil, err
	}
	rows, err := s.env.Pool.Query(ctx, `SELECT id, turn_id, role, content, data, created_at FROM chat_messages
		WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return nil, database.Error("chat: read messages", err)
	}
	return scanMessages(rows)
}

func (s *Service) owns(ctx context.Context, userID, sessionID string) error {
	if !validID(sessionID) {
		return apierr.New(apierr.NotFound, "")
	}
	var one int
	err := s.env.Pool.QueryRow(ctx, `SELECT 1 FROM chat_sessions WHERE id = $1 AND user_id = $2`, sessionID, userID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return apierr.New(apierr.NotFound, "")
	}
	if err != nil {
		return database.Error("chat: read session", err)
	}
	return nil
}

// DeleteSession deletes a conversation, its messages and pending
// confirmations. Its usage records stay: they hold no message text.
func (s *Service) DeleteSession(ctx context.Context, userID, sessionID string) error {
	if !validID(sessionID) {
		return apierr.New(apierr.NotFound, "")
	}
	tag, err := s.env.Pool.Exec(ctx, `DELETE FROM chat_sessions WHERE id = $1 AND user_id = $2`, sessionID, userID)
	if err != nil {
		return database.Error("chat: delete session", err)
	}
	if tag.RowsAffected() == 0 {
		return apierr.New(apierr.NotFound, "")
	}
	return nil
}

// Purged counts what one Purge deleted.
type Purged struct {
	Sessions, Confirmations, IdempotencyKeys, StaleAuditPending int64
}

// Purge enforces retention: sessions idle for RetentionDays (0 keeps
// them), confirmations a day past their expiry, and idempotency keys past
// IdempotencyTTL. It also sweeps the audit log's stale pending rows
// (audit.Log.Sweep): no service of audit's own runs periodically.
func (s *Service) Purge(ctx context.Context) (Purged, error) {
	var p Purged
	if s.cfg.RetentionDays > 0 {
		tag, err := s.env.Pool.Exec(ctx, `DELETE FROM chat_sessions WHERE last_active_at < now() - make_interval(days => $1)`,
			s.cfg.RetentionDays)
		if err != nil {
			return p, database.Error("chat: purge sessions", err)
		}
		p.Sessions = tag.RowsAffected()
	}
	tag, err := s.env.Pool.Exec(ctx, `DELETE FROM chat_confirmations WHERE expires_at < now() - interval '1 day'`)
	if err != nil {
		return p, database.Error("chat: purge confirmations", err)
	}
	p.Confirmations = tag.RowsAffected()
	tag, err = s.env.Pool.Exec(ctx, `DELETE FROM chat_idempotency WHERE created_at < now() - make_interval(secs => $1)`,
		IdempotencyTTL.Seconds())
	if err != nil {
		return p, database.Error("chat: purge idempotency keys", err)
	}
	p.IdempotencyKeys = tag.RowsAffected()
	if s.env.Audit != nil {
		if p.StaleAuditPending, err = s.env.Audit.Sweep(ctx); err != nil {
			return p, err
		}
	}
	return p, nil
}
