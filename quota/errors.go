package quota

import (
	"errors"
	"fmt"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
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
	// ErrNoReservation: SettleVoice knows no reservation for the session
	// (never reserved, or ended more than a day ago).
	ErrNoReservation = errors.New("quota: no voice reservation")
	// ErrUnknownPlan: a plan name that is not in the config.
	ErrUnknownPlan = errors.New("quota: unknown plan")
)

// ActiveSessionError refuses a voice start because the plan's voice
// sessions are all in use. SessionID is the newest active one: the caller
// may end it and start again (DESIGN §6, replace). It unwraps to the 429
// CONCURRENT_LIMIT client error, which names session_id.
type ActiveSessionError struct {
	SessionID string
	Err       *apierr.Error
}

func (e *ActiveSessionError) Error() string {
	return fmt.Sprintf("quota: voice session %s is active: %v", e.SessionID, e.Err)
}

func (e *ActiveSessionError) Unwrap() error { return e.Err }

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

// dbError classifies a database failure with the one classifier every
// package shares (503 for what a client may retry, 500 otherwise).
func dbError(op string, err error) error {
	return database.Error("quota: "+op, err)
}
