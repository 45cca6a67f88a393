package sse

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
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
