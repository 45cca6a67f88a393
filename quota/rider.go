package quota

import "github.com/jackc/pgx/v5"

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
type Rider func(b *pgx.Batch)

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
			r(b)
		}
	}
	return b.Len() > n
}
