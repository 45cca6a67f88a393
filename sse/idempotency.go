package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
)

// idempotencyLease is how long a running key blocks retries; a replica
// that died mid-turn leaves its key to be taken over after it. It outlasts
// any turn (TurnTimeout is at most a few minutes).
const idempotencyLease = 10 * time.Minute

// maxKeyLen bounds an Idempotency-Key.
const maxKeyLen = 200

// checkKey refuses a key that is not 1–200 printable ASCII characters.
func checkKey(k string) error {
	if len(k) == 0 || len(k) > maxKeyLen {
		return apierr.Errorf(apierr.InvalidRequest, "Idempotency-Key must be 1–%d characters.", maxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return apierr.New(apierr.InvalidRequest, "Idempotency-Key must be printable ASCII without spaces.")
		}
	}
	return nil
}

// claimKey makes this request the owner of (user, key), remembering the
// request's fingerprint. It returns the stored response when an earlier
// request with the key finished within IdempotencyTTL, 409 CONFLICT while
// that request still runs, and 422 IDEMPOTENCY_MISMATCH when that request
// was a different one (a key is bound to its first request, as the IETF
// idempotency-key draft says).
func (s *Service) claimKey(ctx context.Context, userID, key string, fingerprint []byte) (stored json.RawMessage, err error) {
	var state string
	err = s.pool.QueryRow(ctx, `INSERT INTO chat_idempotency AS k (user_id, key, state, running_until, fingerprint)
		VALUES ($1, $2, 'running', now() + make_interval(secs => $3), $5)
		ON CONFLICT (user_id, key) DO UPDATE SET state = 'running', response = NULL, response_bytes = NULL,
			running_until = EXCLUDED.running_until, created_at = now(), fingerprint = EXCLUDED.fingerprint
		WHERE k.created_at < now() - make_interval(secs => $4)
		   OR (k.state = 'running' AND k.running_until < now())
		RETURNING state`, userID, key, idempotencyLease.Seconds(), IdempotencyTTL.Seconds(), fingerprint).Scan(&state)
	if err == nil {
		return nil, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, database.Error("sse: claim idempotency key", err)
	}
	var have, response []byte
	err = s.pool.QueryRow(ctx, `SELECT state, fingerprint, coalesce(response_bytes, convert_to(response::text, 'UTF8'))
		FROM chat_idempotency WHERE user_id = $1 AND key = $2`, userID, key).Scan(&state, &have, &response)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// Deleted between the two statements (its request failed): the
		// retry is welcome to try again.
		return nil, apierr.New(apierr.Conflict, "A request with this Idempotency-Key was still running. Please retry.")
	case err != nil:
		return nil, database.Error("sse: read idempotency key", err)
	case have != nil && !bytes.Equal(have, fingerprint):
		// Refused whatever the first request's state: the key is taken.
		return nil, apierr.New(apierr.KeyMismatch, "")
	case state == "running":
		return nil, apierr.New(apierr.Conflict, "A request with this Idempotency-Key is still running.")
	}
	return response, nil
}

// finishKey stores the final response under the key: its exact bytes, and
// as jsonb for replicas of the release before (migration 0056). It runs on
// after the client left, as the turn's record does. A failure is logged:
// the turn has answered, and a retry will run anew.
func (s *Service) finishKey(ctx context.Context, userID, key string, response []byte) {
	wctx, cancel := s.spool.Detach(ctx, recordTimeout)
	defer cancel()
	_, err := s.pool.Exec(wctx, `UPDATE chat_idempotency SET state = 'done', response = $3, response_bytes = $4
		WHERE user_id = $1 AND key = $2`, userID, key, response, response)
	if err != nil {
		s.log.WarnContext(ctx, "chat: could not store the idempotent response", "err", database.Error("sse: store idempotent response", err))
	}
}

// replay answers a retried request with its stored final response: the
// session and the whole message as events (a stream then ends it as any
// turn), and the response itself.
func replay(out sink, raw json.RawMessage) ([]byte, error) {
	var resp Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, apierr.Wrap(apierr.Internal, "", err)
	}
	if err := out.Send("session", map[string]string{"session_id": resp.SessionID}); err != nil {
		return nil, err
	}
	if resp.Message != "" {
		if err := out.Send("content", map[string]string{"content": resp.Message}); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// dropKey frees the key of a request that failed, so a retry runs anew.
func (s *Service) dropKey(ctx context.Context, userID, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM chat_idempotency WHERE user_id = $1 AND key = $2 AND state = 'running'`,
		userID, key); err != nil {
		s.log.WarnContext(ctx, "chat: could not free an idempotency key", "err", err)
	}
}
