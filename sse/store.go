package sse

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/page"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// newID is a chat id (session, turn, message): prefix and 12 random bytes.
func newID(prefix string) string { return randid.New(prefix, 12) }

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

// ensureSession returns the session to run a turn in: id when it is the
// user's and not idle past IdleExpiry, else a new id (fresh). A new
// session's row is written with the turn's first write (its messages, or a
// pending confirmation), so a turn makes no commit of its own before the
// model is called. Another user's session, or none, is NOT_FOUND.
func (s *Service) ensureSession(ctx context.Context, userID, id string) (_ string, fresh bool, _ error) {
	if id != "" {
		var live bool
		err := s.pool.QueryRow(ctx, `SELECT last_active_at > now() - make_interval(secs => $3)
			FROM chat_sessions WHERE id = $1 AND user_id = $2`, id, userID, IdleExpiry.Seconds()).Scan(&live)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", false, apierr.New(apierr.NotFound, "")
		}
		if err != nil {
			return "", false, database.Error("sse: read session", err)
		}
		if live {
			return id, false, nil
		}
	}
	return newID("cs_"), true, nil
}

// createSessionSQL writes a fresh session's row; the id is the server's
// own, so a conflict can only be this turn's earlier write.
const createSessionSQL = `INSERT INTO chat_sessions (id, user_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`

// history is the last n messages of a session, oldest first.
func (s *Service) history(ctx context.Context, sessionID string, n int) ([]Message, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, turn_id, role, content, data, created_at FROM (
			SELECT * FROM chat_messages WHERE session_id = $1 ORDER BY seq DESC LIMIT $2) m
		ORDER BY seq`, sessionID, n)
	if err != nil {
		return nil, database.Error("sse: read history", err)
	}
	return scanMessages(rows)
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
		return nil, database.Error("sse: read messages", err)
	}
	return out, nil
}

// storedTurn is what a finished turn writes.
type storedTurn struct {
	sessionID, userID, turnID string
	userText                  string
	userData                  messageData
	answerID, answer          string
	answerData                messageData
}

// saveMessagesSQL writes a turn's two messages, in order, if its session
// still exists: the user may delete the conversation while the turn runs,
// and then the turn stores nothing of it (its answer is still delivered and
// its usage recorded). The key-share lock holds a delete that comes after
// this statement until the transaction ends; one that came before leaves
// no row to insert under.
const saveMessagesSQL = `WITH s AS (SELECT id FROM chat_sessions WHERE id = $2 FOR KEY SHARE)
	INSERT INTO chat_messages (id, session_id, user_id, turn_id, role, content, data)
	SELECT m.id, s.id, $3, $4, m.role, m.content, m.data
	FROM s, (VALUES (1, $1::text, 'user', $5::text, $6::jsonb), (2, $7, 'assistant', $8, $9)) AS m (ord, id, role, content, data)
	ORDER BY m.ord`

// saveTurn writes both messages in tx (creating a fresh session), marks
// the session active and trims it to MaxSessionMessages, in one round trip.
func saveTurn(ctx context.Context, tx pgx.Tx, t storedTurn, fresh bool) error {
	ud, err := json.Marshal(t.userData)
	if err != nil {
		return err
	}
	ad, err := json.Marshal(t.answerData)
	if err != nil {
		return err
	}
	var b pgx.Batch
	if fresh {
		b.Queue(createSessionSQL, t.sessionID, t.userID)
	}
	b.Queue(saveMessagesSQL, newID("msg_"), t.sessionID, t.userID, t.turnID, t.userText, ud, t.answerID, t.answer, ad)
	b.Queue(`WITH cut AS (
			DELETE FROM chat_messages WHERE session_id = $1 AND seq <= (
				SELECT seq FROM chat_messages WHERE session_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)
			RETURNING 1)
		UPDATE chat_sessions SET last_active_at = now(),
			message_count = message_count + 2 - (SELECT count(*) FROM cut)
		WHERE id = $1`, t.sessionID, MaxSessionMessages)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return database.Error("sse: save the turn's messages", err)
	}
	return nil
}

// ListSessions is the user's sessions, newest first.
func (s *Service) ListSessions(ctx context.Context, userID string, req page.Request) (page.List[Session], error) {
	after := req.After
	if after.IsZero() {
		after = page.Key{At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), ID: ""}
	}
	rows, err := s.pool.Query(ctx, `SELECT id, created_at, last_active_at, message_count FROM chat_sessions
		WHERE user_id = $1 AND (created_at, id) < ($2, $3)
		ORDER BY created_at DESC, id DESC LIMIT $4`, userID, after.At, after.ID, req.Limit+1)
	if err != nil {
		return page.List[Session]{}, database.Error("sse: list sessions", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Session, error) {
		var x Session
		err := r.Scan(&x.ID, &x.CreatedAt, &x.LastActiveAt, &x.MessageCount)
		x.CreatedAt, x.LastActiveAt = x.CreatedAt.UTC(), x.LastActiveAt.UTC()
		return x, err
	})
	if err != nil {
		return page.List[Session]{}, database.Error("sse: list sessions", err)
	}
	return page.Make(list, req.Limit, func(x Session) page.Key { return page.Key{At: x.CreatedAt, ID: x.ID} }), nil
}

// Messages is a session's whole stored history, oldest first; another
// user's session is NOT_FOUND.
func (s *Service) Messages(ctx context.Context, userID, sessionID string) ([]Message, error) {
	if err := s.owns(ctx, userID, sessionID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, turn_id, role, content, data, created_at FROM chat_messages
		WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return nil, database.Error("sse: read messages", err)
	}
	return scanMessages(rows)
}

func (s *Service) owns(ctx context.Context, userID, sessionID string) error {
	if !validID(sessionID) {
		return apierr.New(apierr.NotFound, "")
	}
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM chat_sessions WHERE id = $1 AND user_id = $2`, sessionID, userID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return apierr.New(apierr.NotFound, "")
	}
	if err != nil {
		return database.Error("sse: read session", err)
	}
	return nil
}

// DeleteSession deletes a conversation, its messages and pending
// confirmations. Its usage records stay: they hold no message text.
func (s *Service) DeleteSession(ctx context.Context, userID, sessionID string) error {
	if !validID(sessionID) {
		return apierr.New(apierr.NotFound, "")
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM chat_sessions WHERE id = $1 AND user_id = $2`, sessionID, userID)
	if err != nil {
		return database.Error("sse: delete session", err)
	}
	if tag.RowsAffected() == 0 {
		return apierr.New(apierr.NotFound, "")
	}
	return nil
}

// Purged counts what one Purge deleted.
type Purged struct {
	Sessions, Confirmations, IdempotencyKeys int64
}

// Purge enforces retention: sessions idle for RetentionDays (0 keeps
// them), confirmations a day past their expiry, and idempotency keys past
// IdempotencyTTL.
func (s *Service) Purge(ctx context.Context) (Purged, error) {
	var p Purged
	if s.cfg.RetentionDays > 0 {
		tag, err := s.pool.Exec(ctx, `DELETE FROM chat_sessions WHERE last_active_at < now() - make_interval(days => $1)`,
			s.cfg.RetentionDays)
		if err != nil {
			return p, database.Error("sse: purge sessions", err)
		}
		p.Sessions = tag.RowsAffected()
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM chat_confirmations WHERE expires_at < now() - interval '1 day'`)
	if err != nil {
		return p, database.Error("sse: purge confirmations", err)
	}
	p.Confirmations = tag.RowsAffected()
	tag, err = s.pool.Exec(ctx, `DELETE FROM chat_idempotency WHERE created_at < now() - make_interval(secs => $1)`,
		IdempotencyTTL.Seconds())
	if err != nil {
		return p, database.Error("sse: purge idempotency keys", err)
	}
	p.IdempotencyKeys = tag.RowsAffected()
	return p, nil
}
