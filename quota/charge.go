package quota

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// Execer is what ChargeDay needs: the caller's transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// ChargeDay adds tokens and cost that were not admitted as a chat turn (a
// voice session's, when it ends) to userID's UTC day, so the plan's daily
// caps cover voice and chat together. Run it with the transaction that
// writes the usage record: the two commit together, so the day is charged
// exactly once.
func (s *Service) ChargeDay(ctx context.Context, tx Execer, userID string, tokens, costMicros int64) error {
	if err := checkAmounts("daily charge", tokens, costMicros); err != nil {
		return err
	}
	if tokens == 0 && costMicros == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `SELECT quota_charge_day($1, $2, $3, $4)`, userID, tokens, costMicros, s.clockArg())
	if err != nil {
		return dbError("charge the day", err)
	}
	return nil
}
