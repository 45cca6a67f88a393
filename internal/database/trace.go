package database

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// counter counts what a pool sends PostgreSQL: statements (each query, each
// query of a batch, each copy) and round trips (a query, a whole batch, a
// copy, a prepare), so an operator can see what a request costs the
// database from the gateway's side (voxgate_db_statements_total and
// voxgate_db_round_trips_total; voxgate bench reads them per request).
// Connection pings are not traced by pgx and not counted.
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

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.statements.Add(1)
}

func (c *counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *counter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.statements.Add(1)
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

func (c *counter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *counter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
