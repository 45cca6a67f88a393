package controlplane

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
)

// checkChatLink lets a voice session link only to one of the caller's own
// existing chat sessions (DESIGN §6). Anything else, another user's
// included, is 404, so a link never reveals that a session exists.
func (s *Service) checkChatLink(ctx context.Context, userID, chatID string) error {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM chat_sessions WHERE id = $1 AND user_id = $2`, chatID, userID).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return apierr.Wrap(apierr.NotFound, "There is no such chat session to link.", err)
	case err != nil:
		return database.Error("controlplane: check the chat session", err)
	}
	return nil
}
