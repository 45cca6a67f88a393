package database

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// counter counts what a pool sends PostgreSQL: statements (each query, each
// query of a batch, each copy) and round trips (a query, a whole batch, a
// copy, a prepare), so an operator can see what a request costs the
// database from the gateway's side (voxgate_db_statements_total and
// voxgate_db_round_trips_total; voxgate bench reads them per request).
// Connection pings are not traced by pgx and not counted. The tracer also
// marks a connection whose server refused a write as read-only (failover.go).
type counter struct {
	statements, roundTrips atomic.Int64
}

var (
	_ pgx.QueryTracer    = (*counter)(nil)
	_ pgx.BatchTracer    = (*counter)(nil)
	_ pgx.CopyFromTracer = (*counter)(nil)
	_ pgx.PrepareTracer  = (*counter)(nil)
)

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.statements.Add(1)
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TraceQueryEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	markReadOnly(conn, data.Err)
}

func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TraceBatchQuery(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	c.statements.Add(1)
	markReadOnly(conn, data.Err)
}

func (c *counter) TraceBatchEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	markReadOnly(conn, data.Err)
}

func (c *counter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.statements.Add(1)
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TraceCopyFromEnd(_ context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	markReadOnly(conn, data.Err)
}

func (c *counter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// Sent is what pool has sent PostgreSQL so far, as the pool's metrics
// count it: statements and round trips (zeros for a pool Open did not
// make). Tests read a request's cost to the database with it.
func Sent(pool *pgxpool.Pool) (statements, roundTrips int64) {
	c, _ := pool.Config().ConnConfig.Tracer.(*counter)
	if c == nil {
		return 0, 0
	}
	return c.statements.Load(), c.roundTrips.Load()
}
