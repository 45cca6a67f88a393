package quota

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Execer is what ChargeDay needs: the caller's transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// chargeDaySQL adds tokens and cost to a user's UTC day.
const chargeDaySQL = `SELECT quota_charge_day($1, $2, $3, $4)`

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
	_, err := tx.Exec(ctx, chargeDaySQL, userID, tokens, costMicros, s.clockArg())
	if err != nil {
		return dbError("charge the day", err)
	}
	return nil
}

// QueueChargeDay is ChargeDay queued on b, the batch that writes the usage
// record, so the charge travels in the record's round trip. Its error, if
// the statement fails, is the batch's.
func (s *Service) QueueChargeDay(b *pgx.Batch, userID string, tokens, costMicros int64) error {
	if err := checkAmounts("daily charge", tokens, costMicros); err != nil {
		return err
	}
	if tokens == 0 && costMicros == 0 {
		return nil
	}
	b.Queue(chargeDaySQL, userID, tokens, costMicros, s.clockArg())
	return nil
}
