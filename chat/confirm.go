package chat

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
)

// pending is a stored tool call awaiting the user's confirmation.
type pending struct {
	CallID        string
	SessionID     string
	TurnID        string
	Tool          string
	Arguments     json.RawMessage
	AssistantText string
}

// storePending saves a validated call for confirmation, bound to the user
// and the session, for ConfirmationTTL. A fresh session's row is written
// first: the confirmation belongs to it.
func (s *Service) storePending(ctx context.Context, userID string, p pending, fresh bool) error {
	if fresh {
		if _, err := s.env.Pool.Exec(ctx, createSessionSQL, p.SessionID, userID); err != nil {
			return database.Error("chat: create session", err)
		}
	}
	// As with a turn's messages (saveMessagesSQL), a session deleted while
	// the turn ran gets nothing stored under it.
	tag, err := s.env.Pool.Exec(ctx, `INSERT INTO chat_confirmations
		(call_id, user_id, session_id, turn_id, tool, arguments, assistant_text, expires_at)
		SELECT $1, $2, id, $4, $5, $6, $7, now() + make_interval(secs => $8)
		FROM chat_sessions WHERE id = $3 FOR KEY SHARE`,
		p.CallID, userID, p.SessionID, p.TurnID, p.Tool, p.Arguments, p.AssistantText, ConfirmationTTL.Seconds())
	if err != nil {
		return database.Error("chat: store confirmation", err)
	}
	if tag.RowsAffected() == 0 {
		return apierr.New(apierr.NotFound, "This conversation was deleted.")
	}
	return nil
}

const pendingCols = `call_id, session_id, turn_id, tool, arguments, assistant_text`

func scanPending(row pgx.Row) (pending, error) {
	var p pending
	err := row.Scan(&p.CallID, &p.SessionID, &p.TurnID, &p.Tool, &p.Arguments, &p.AssistantText)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, apierr.New(apierr.NotFound, "That confirmation is not available any more.")
	}
	if err != nil {
		return p, database.Error("chat: read confirmation", err)
	}
	return p, nil
}

// peekPending finds a usable confirmation without using it, so a request
// naming an unknown, expired, used or foreign one is refused (404) before
// it is admitted and counted.
func (s *Service) peekPending(ctx context.Context, userID, callID string) (pending, error) {
	return scanPending(s.env.Pool.QueryRow(ctx, `SELECT `+pendingCols+` FROM chat_confirmations
		WHERE call_id = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > now()`, callID, userID))
}

// takePending uses the confirmation: exactly one request can, whichever
// replica it reaches.
func (s *Service) takePending(ctx context.Context, userID, callID string) (pending, error) {
	return scanPending(s.env.Pool.QueryRow(ctx, `UPDATE chat_confirmations SET used_at = now()
		WHERE call_id = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > now()
		RETURNING `+pendingCols, callID, userID))
}
