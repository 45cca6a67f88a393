package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
)

// The tool_calls statements. Deadlines use the database clock so replicas
// with skewed clocks agree on when a running row is stale.
const (
	// claimSQL inserts the running row; the replica that gets a row back
	// owns the call and runs it. It takes no lock: the unique key decides,
	// and a claim that meets an uncommitted row waits only for that
	// INSERT's own transaction.
	claimSQL = `INSERT INTO tool_calls
	(session_id, call_id, user_id, session_kind, source, tool, arguments, deadline)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, now() + make_interval(secs => $8::float8))
ON CONFLICT (session_id, call_id) DO NOTHING
RETURNING id`

	// finishSQL only touches a row still running, so a result that comes
	// back after the row was declared interrupted does not overwrite it.
	finishSQL = `UPDATE tool_calls
SET status = $2, response = $3, error_code = $4, finished_at = now(), duration_ms = $5
WHERE id = $1 AND status = 'running'`

	// peekSQL reads a duplicate's row and compares it to the new call in
	// the database: jsonb equality ignores key order and spacing.
	peekSQL = `SELECT user_id, tool = $3 AND arguments = $4::jsonb, status, response,
	deadline <= now(), extract(epoch FROM deadline - now())::float8
FROM tool_calls WHERE session_id = $1 AND call_id = $2`

	// interruptSQL closes a stale running row once, whoever gets there
	// first; the others read the row it wrote.
	interruptSQL = `UPDATE tool_calls
SET status = 'failed', response = $2, error_code = 'interrupted', finished_at = now(),
	duration_ms = (extract(epoch FROM now() - started_at) * 1000)::int
WHERE id = (SELECT id FROM tool_calls WHERE session_id = $1 AND call_id = $3)
	AND status = 'running' AND deadline <= now()`
)

// callRow is a duplicate's view of the stored call.
type callRow struct {
	userID    string
	same      bool // same tool and arguments
	status    string
	response  []byte
	stale     bool
	remaining time.Duration // until the deadline, by the database clock
}

type store struct{ db *pgxpool.Pool }

// claim inserts the running row. owned is false when the (session,
// call_id) already exists.
func (s store) claim(ctx context.Context, c *Call, args []byte, deadline time.Duration) (id int64, owned bool, err error) {
	err = s.db.QueryRow(ctx, claimSQL, c.SessionID, c.CallID, c.Principal.UserID, string(c.SessionKind),
		c.Source, c.Name, args, deadline.Seconds()).Scan(&id)
	switch {
	case err == nil:
		return id, true, nil
	case errors.Is(err, pgx.ErrNoRows):
		return 0, false, nil
	}
	return 0, false, classify("record the call", err)
}

// finish stores the result. done is false when the row had already been
// declared interrupted.
func (s store) finish(ctx context.Context, id int64, res *Result, took time.Duration) (done bool, err error) {
	// A replay decodes these bytes into a Result.
	resp, err := json.Marshal(res)
	if err != nil {
		return false, apierr.Wrap(apierr.Internal, "", fmt.Errorf("tools: encode response: %w", err))
	}
	var code *string
	status := "succeeded"
	if res.Error != nil {
		status, code = "failed", &res.Error.Code
	}
	// The caller may have gone; the row must still leave running.
	ctx = context.WithoutCancel(ctx)
	tag, err := s.db.Exec(ctx, finishSQL, id, status, resp, code, took.Milliseconds())
	if err != nil {
		return false, classify("store the result", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (s store) peek(ctx context.Context, c *Call, args []byte) (callRow, error) {
	var r callRow
	var remaining float64
	err := s.db.QueryRow(ctx, peekSQL, c.SessionID, c.CallID, c.Name, args).
		Scan(&r.userID, &r.same, &r.status, &r.response, &r.stale, &remaining)
	r.remaining = time.Duration(remaining * float64(time.Second))
	if errors.Is(err, pgx.ErrNoRows) {
		// Only possible if someone deleted the row between claim and peek.
		return r, apierr.Wrap(apierr.Conflict, "This call changed while it was read. Please retry.", err).WithRetry(1)
	}
	if err != nil {
		return r, classify("read the call", err)
	}
	return r, nil
}

// interrupt marks a stale running row failed: interrupted. It is a no-op
// when another replica did it first or the row finished meanwhile.
func (s store) interrupt(ctx context.Context, c *Call, res *Result) error {
	resp, err := json.Marshal(res)
	if err != nil {
		return apierr.Wrap(apierr.Internal, "", err)
	}
	if _, err := s.db.Exec(ctx, interruptSQL, c.SessionID, resp, c.CallID); err != nil {
		return classify("mark the call interrupted", err)
	}
	return nil
}

// classify maps a database error to the client-safe error type. Bad
// argument values that only the database notices (numbers beyond numeric's
// range, say) are the caller's fault, not ours; everything else goes through
// the shared classifier. A cancelled context is returned as it is: the
// executor tells its own timeout from the caller leaving.
func classify(doing string, err error) error {
	if database.IsDataException(err) {
		return apierr.Wrap(apierr.ToolValidation, "The arguments contain a value that cannot be stored.", err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return database.Error("tools: "+doing, err)
}
