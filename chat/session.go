package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/unit"
)

// useConfirmation uses the confirmation the request answers, if any: it
// must belong to the turn's session (admit found it, DESIGN §7: ensure
// the session and its ownership), and only one request can use it,
// whichever replica it reaches.
func (t *turn) useConfirmation(ctx context.Context) error {
	if t.req.Confirm == nil {
		return nil
	}
	if t.sessionID != t.req.SessionID {
		return errConfirmationGone()
	}
	pp, err := t.s.takePending(ctx, t.p.UserID, t.req.Confirm.CallID)
	if err != nil {
		return err
	}
	t.confirm = &pp
	return nil
}

// ensureSession returns the session to run a turn in: id when it is the
// user's and not idle past IdleExpiry, with its last HistoryMessages
// messages, oldest first; else a new id (fresh). A new session's row is
// written with the turn's first write (its messages, or a pending
// confirmation), so a turn makes no commit of its own before the model is
// called. Another user's session, or none, is NOT_FOUND. The owner check
// and the history are one query, one round trip (issue 36): the history is
// only read, so reading it before admission has no effect to undo.
func (s *Service) ensureSession(ctx context.Context, userID, id string) (_ string, fresh bool, hist []Message, _ error) {
	if id == "" {
		return unit.NewID("cs_"), true, nil, nil
	}
	rows, err := s.env.Pool.Query(ctx, sessionHistorySQL, id, userID, IdleExpiry.Seconds(), HistoryMessages)
	if err != nil {
		return "", false, nil, database.Error("chat: read session", err)
	}
	found, live := false, false
	for rows.Next() {
		var m Message
		var mid, turnID, role, content *string
		var data []byte
		var at *time.Time
		if err := rows.Scan(&live, &mid, &turnID, &role, &content, &data, &at); err != nil {
			rows.Close()
			return "", false, nil, database.Error("chat: read session", err)
		}
		found = true
		if mid == nil {
			continue // a live session without messages, or one gone idle
		}
		m.ID, m.TurnID, m.Role, m.Content, m.CreatedAt = *mid, *turnID, *role, *content, at.UTC()
		if err := json.Unmarshal(data, &m.messageData); err != nil {
			rows.Close()
			return "", false, nil, database.Error("chat: read session", err)
		}
		hist = append(hist, m)
	}
	if err := rows.Err(); err != nil {
		return "", false, nil, database.Error("chat: read session", err)
	}
	switch {
	case !found:
		return "", false, nil, apierr.New(apierr.NotFound, "")
	case !live:
		return unit.NewID("cs_"), true, nil, nil
	}
	return id, false, hist, nil
}

// sessionHistorySQL is a session's liveness, when it is the user's, beside
// its last $4 messages in order (none when it has gone idle): one row with
// NULL message columns for a session without them.
const sessionHistorySQL = `SELECT l.live, m.id, m.turn_id, m.role, m.content, m.data, m.created_at
	FROM (SELECT s.id, s.last_active_at > now() - make_interval(secs => $3) AS live
	        FROM chat_sessions s WHERE s.id = $1 AND s.user_id = $2) l
	LEFT JOIN LATERAL (SELECT id, turn_id, role, content, data, created_at, seq FROM chat_messages
	        WHERE session_id = l.id ORDER BY seq DESC LIMIT $4) m ON l.live
	ORDER BY m.seq`

// createSessionSQL writes a fresh session's row; the id is the server's
// own, so a conflict can only be this turn's earlier write.
const createSessionSQL = `INSERT INTO chat_sessions (id, user_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`
