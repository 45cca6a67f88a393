package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/quota"
)

// idempotencyLease is how long a running key blocks retries; a replica
// that died mid-turn leaves its key to be taken over after it. It outlasts
// any turn (TurnTimeout is at most a few minutes).
const idempotencyLease = 10 * time.Minute

// maxKeyLen bounds an Idempotency-Key.
const maxKeyLen = 200

// checkKey refuses a key that is not 1–200 printable ASCII characters
// without spaces: chat's bound, within the admission key's rule (the key
// keys the turn's admission too).
func checkKey(k string) error {
	if len(k) == 0 || len(k) > maxKeyLen {
		return apierr.Errorf(apierr.InvalidRequest, "Idempotency-Key must be 1–%d characters.", maxKeyLen)
	}
	return quota.CheckKey(k)
}

// claimKey makes this request the owner of (user, key), remembering the
// request's fingerprint. It returns the stored response when an earlier
// request with the key finished within IdempotencyTTL, 409 CONFLICT while
// that request still runs, and 422 IDEMPOTENCY_MISMATCH when that request
// was a different one (a key is bound to its first request, as the IETF
// idempotency-key draft says).
//
// A running key whose request was admitted but never learned it (the
// admission's reply was lost, as in a failover, so that request failed,
// and its key may not have been dropped) is not running: the admission
// ticket it was given waits, untaken, for a retry (quota.KeyAwaitsRetry).
// The retry goes on under the key, and its admission, keyed by the same
// key, is answered with that ticket, counted once.
func (s *Service) claimKey(ctx context.Context, userID, key string, fingerprint []byte) (stored json.RawMessage, err error) {
	var state string
	err = s.env.Pool.QueryRow(ctx, `INSERT INTO chat_idempotency AS k (user_id, key, state, running_until, fingerprint)
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
		return nil, database.Error("chat: claim idempotency key", err)
	}
	var have, response []byte
	err = s.env.Pool.QueryRow(ctx, `SELECT state, fingerprint, coalesce(response_bytes, convert_to(response::text, 'UTF8'))
		FROM chat_idempotency WHERE user_id = $1 AND key = $2`, userID, key).Scan(&state, &have, &response)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// Deleted between the two statements (its request failed): the
		// retry is welcome to try again.
		return nil, apierr.New(apierr.Conflict, "A request with this Idempotency-Key was still running. Please retry.")
	case err != nil:
		return nil, database.Error("chat: read idempotency key", err)
	case have != nil && !bytes.Equal(have, fingerprint):
		// Refused whatever the first request's state: the key is taken.
		return nil, apierr.New(apierr.KeyMismatch, "")
	case state == "running":
		waiting, err := s.env.Quota.KeyAwaitsRetry(ctx, userID, key)
		if err != nil {
			return nil, err
		}
		if waiting {
			return nil, nil
		}
		return nil, apierr.New(apierr.Conflict, "A request with this Idempotency-Key is still running.")
	}
	return response, nil
}

// finishKey stores the final response under the key: its exact bytes, and
// as jsonb for replicas of the release before (migration 0056). It runs on
// after the client left, as the turn's record does. A failure is logged:
// the turn has answered, and a retry will run anew.
func (s *Service) finishKey(ctx context.Context, userID, key string, response []byte) {
	wctx, cancel := s.env.Spool.Detach(ctx, recordTimeout)
	defer cancel()
	_, err := s.env.Pool.Exec(wctx, `UPDATE chat_idempotency SET state = 'done', response = $3, response_bytes = $4
		WHERE user_id = $1 AND key = $2`, userID, key, response, response)
	if err != nil {
		s.env.Log.WarnContext(ctx, "chat: could not store the idempotent response", "err", database.Error("chat: store idempotent response", err))
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
// A request refused because another attempt with the key holds its
// admission (quota.ErrKeyInUse) keeps the key: the key is that attempt's.
func (s *Service) dropKey(ctx context.Context, userID, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.env.Pool.Exec(ctx, `DELETE FROM chat_idempotency WHERE user_id = $1 AND key = $2 AND state = 'running'`,
		userID, key); err != nil {
		s.env.Log.WarnContext(ctx, "chat: could not free an idempotency key", "err", err)
	}
}
