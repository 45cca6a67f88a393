package billing

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/database"
)

// ErrRepriceUnprices: the new table would leave records unpriced that the
// stored costs priced, and applying it would take their costs away.
var ErrRepriceUnprices = errors.New("billing: the new price table leaves priced records unpriced")

// ApplyReprice prices the filter's records again with p, as Reprice
// does, and writes their new costs and p's version, in one transaction
// with an audit row (usage_repricings) naming by: applied and recorded, or
// neither. The records are locked while they are read, so a record
// written or attached meanwhile is not priced from a stale read. It
// refuses a table under which a model has more unpriced records than
// before (ErrRepriceUnprices): a cost is not taken away by a table that
// forgot a model. The rollups follow through their trigger; the users'
// quota days, settled when each record was written, are not settled again.
func (l *Ledger) ApplyReprice(ctx context.Context, f Filter, p *Prices, by string) (Repricing, error) {
	var out Repricing
	err := pgx.BeginTxFunc(ctx, l.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var each []repriced
		var err error
		if out, each, err = reprice(ctx, tx, f, p, " FOR UPDATE"); err != nil {
			return err
		}
		for _, m := range out.Models {
			if m.NewUnpriced > m.OldUnpriced {
				return fmt.Errorf("%w: %s, %d records unpriced, %d before", ErrRepriceUnprices, m.Model, m.NewUnpriced, m.OldUnpriced)
			}
		}
		ids := make([]int64, len(each))
		costs := make([]*int64, len(each))
		for i, r := range each {
			ids[i], costs[i] = r.id, r.cost
		}
		// One statement for every record, whatever the range's size.
		if _, err := tx.Exec(ctx, `UPDATE usage_records r SET cost_micros = n.cost, price_version = $3
			FROM unnest($1::bigint[], $2::bigint[]) AS n(id, cost) WHERE r.id = n.id`, ids, costs, p.Version); err != nil {
			return database.Error("billing: apply reprice", err)
		}
		t := out.Total
		_, err = tx.Exec(ctx, `INSERT INTO usage_repricings (applied_by, from_at, to_at, tz, user_id, kind, mode, model,
			new_version, records, old_cost, new_cost, old_unpriced, new_unpriced)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::numeric, $12::numeric, $13, $14)`,
			by, f.From, f.To, f.zone().String(), f.UserID, f.Kind, f.Mode, f.Model,
			p.Version, t.Records, t.OldCost.String(), t.NewCost.String(), t.OldUnpriced, t.NewUnpriced)
		if err != nil {
			return database.Error("billing: record the repricing", err)
		}
		return nil
	})
	if err != nil {
		return Repricing{}, err
	}
	l.unfolded.Store(true) // the trigger appended the records' changes to the deltas
	return out, nil
}
