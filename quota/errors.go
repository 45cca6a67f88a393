package quota

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voxgate/voxgate/internal/apierr"
)

// Sentinel errors; callers test them with errors.Is. Those that can reach a
// client are wrapped in an *apierr.Error.
var (
	// ErrInvalidAmount: an estimate, usage or seconds value is negative or
	// above MaxAmount. It is a caller's bug, never a user's.
	ErrInvalidAmount = errors.New("quota: amount out of range")
	// ErrTicketDone: Settle or Release on a ticket already settled.
	ErrTicketDone = errors.New("quota: ticket already settled")
	// ErrLeaseLost: Renew found the lease expired (and maybe reclaimed);
	// the turn may finish, but its slot may already be someone else's.
	ErrLeaseLost = errors.New("quota: lease expired")
	// ErrNoReservation: SettleVoice found no reservation for the session
	// (already ended, or reclaimed after it expired).
	ErrNoReservation = errors.New("quota: no voice reservation")
	// ErrUnknownPlan: a plan name that is not in the config.
	ErrUnknownPlan = errors.New("quota: unknown plan")
)

// MaxAmount bounds every estimate, usage and seconds value. It matches the
// largest limit config accepts, so sums stay far from int64 overflow.
const MaxAmount = 1_000_000_000_000_000 // 1e15

func checkAmounts(what string, vals ...int64) error {
	for _, v := range vals {
		if v < 0 || v > MaxAmount {
			return apierr.Wrap(apierr.Internal, "", fmt.Errorf("%w: %s %d not in [0, %d]", ErrInvalidAmount, what, v, int64(MaxAmount)))
		}
	}
	return nil
}

// dbError classifies a database failure by SQLSTATE: transient conditions a
// client may retry become 503 UNAVAILABLE, anything else 500 INTERNAL. The
// cause is kept for the log and never shown.
func dbError(op string, err error) error {
	cause := fmt.Errorf("quota: %s: %w", op, err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return apierr.Wrap(apierr.Unavailable, "", cause).WithRetry(1)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", // serialization failure, deadlock
			"55P03",                   // lock not available
			"53300",                   // too many connections
			"57014",                   // query cancelled (statement_timeout)
			"57P01", "57P02", "57P03": // shutdown, crash, cannot connect now
			return apierr.Wrap(apierr.Unavailable, "", cause).WithRetry(1)
		case "23505": // unique violation: a voice session id reused
			return apierr.Wrap(apierr.Conflict, "", cause)
		}
		if len(pgErr.Code) == 2+3 && pgErr.Code[:2] == "08" { // connection exception class
			return apierr.Wrap(apierr.Unavailable, "", cause).WithRetry(1)
		}
		return apierr.Wrap(apierr.Internal, "", cause)
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return apierr.Wrap(apierr.Unavailable, "", cause).WithRetry(1)
	}
	return apierr.Wrap(apierr.Internal, "", cause)
}
