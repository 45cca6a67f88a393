package quota

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// A Rider queues statements that travel with one request's admission
// (docs/quota.md, "Riders"): on the admission's batch, after its decision,
// in its round trip and its transaction. So a unit of work that must
// write something as it starts (its pending audit row) reaches
// PostgreSQL once before the model call, not twice.
//
// The batch decides many users' requests in one transaction, so a
// rider's statements must act only when their own request was admitted:
// AdmittedSQL, applied to the request's user id, says so. The statements
// share the batch's fate: one that fails fails every admission of the
// batch, so a rider queues only statements that cannot fail on valid
// input (check the input in Go first).
type Rider struct {
	// Queue queues the statements.
	Queue func(b *pgx.Batch)
	// Abandoned, when set, queues what closes them for a request admitted
	// after its caller went away: it travels with the release of the
	// ticket nobody will use (batch.go), so a pending row does not stay
	// pending for a unit that never ran.
	Abandoned func(b *pgx.Batch)
}

// AdmittedSQL is the SQL function, of one text argument (the user id),
// that is true in an admission's transaction when it admitted that user's
// request (migration 0084).
const AdmittedSQL = "quota_admitted_now"

// queueRiders queues the riders of the calls of a batch; false when none
// has any, so the batch goes as the one statement it always was.
func queueRiders(b *pgx.Batch, batch []*admitCall) bool {
	n := b.Len()
	for _, c := range batch {
		for _, r := range c.riders {
			if r.Queue != nil {
				r.Queue(b)
			}
		}
	}
	return b.Len() > n
}

// releaseWithRiders frees an abandoned call's ticket, with its riders'
// Abandoned statements in the same batch and transaction.
func (s *Service) releaseWithRiders(ctx context.Context, c *admitCall) error {
	var b pgx.Batch
	st, err := s.QueueSettle(&b, c.userID, c.ticketID, Usage{})
	if err != nil {
		return err
	}
	for _, r := range c.riders {
		if r.Abandoned != nil {
			r.Abandoned(&b)
		}
	}
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return dbError("release an abandoned ticket", err)
	}
	_, err = st.Daily(ctx)
	return err
}
