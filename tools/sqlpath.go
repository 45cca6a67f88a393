package tools

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// SQLBody is the fast path of a built-in whose work is one read-only SQL
// statement against the gateway's own database, such as a search. The
// executor then locks the call, runs the statement and stores the finished
// row in one transaction and two round trips, shared by the calls of the
// tool that arrive together, instead of committing a running row, running
// the body and committing the result (see runBatch). The tool's Run stays
// required: it answers whenever the fast path cannot.
//
// Webhook tools and slow bodies must not use it: the fast path holds a
// database connection, and the calls' locks, while the statement runs.
// The statement must only read: when a batch fails, the calls whose rows
// were not yet collected run again alone, and their statements with them.
type SQLBody struct {
	// Build returns the statement and its arguments for a validated call.
	// It must not block. An error is recorded as the call's failure, as if
	// Run had returned it.
	Build func(inv Invocation) (sql string, args []any, err error)
	// Collect reads the statement's rows into the tool's outcome. It runs
	// inside the open transaction, so it must only read rows, never block.
	// Returning ErrUseRun hands the call to Run instead.
	Collect func(rows pgx.Rows, inv Invocation) (Outcome, error)
}

// ErrUseRun, returned by SQLBody.Collect, says the statement cannot answer
// this call; the executor rolls back and answers it with the tool's Run.
var ErrUseRun = errors.New("tools: the statement cannot answer this call; use Run")

// executeSQL answers a call of a tool with an SQLBody on the fast path:
// the call joins its tool's batch (sqlbatch.go), and the batch's
// transaction locks it, runs its statement and stores its finished row.
// When the fast path cannot answer, the call goes on as the batch said:
// alone in a batch of its own, as a duplicate, or down the general path.
func (e *Executor) executeSQL(ctx context.Context, t *Tool, c *Call, args []byte, inv Invocation) (Result, error) {
	query, qargs, err := t.SQL.Build(inv)
	if err != nil {
		return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return e.settle(ctx, t, inv, ran{err: err}) })
	}
	j := &sqlJob{ctx: ctx, t: t, c: c, args: args, inv: inv, query: query, qargs: qargs}
	e.batchers[t].do(j) // NewExecutor made one for every tool with an SQLBody
	if j.next == nextAlone {
		*j = sqlJob{ctx: ctx, t: t, c: c, args: args, inv: inv, query: query, qargs: qargs}
		e.runBatch([]*sqlJob{j})
	}
	switch j.next {
	case nextAnswered:
		return j.res, nil
	case nextDuplicate:
		return e.duplicate(ctx, t, c, args)
	case nextRun:
		return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return e.run(ctx, t, inv) })
	case nextTimeout:
		// Nothing was stored: claim on the general path, which records the
		// timeout or finds another replica's answer.
		return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return timeoutResult(t), outcomeTimeout })
	}
	return Result{}, j.err
}

// collect runs the tool's Collect with panic recovery.
func (e *Executor) collect(ctx context.Context, t *Tool, inv Invocation, rows pgx.Rows) (r ran, useRun bool) {
	defer func() {
		if p := recover(); p != nil {
			e.logPanic(ctx, t, inv, p)
			r, useRun = ran{panicked: true}, false
		}
	}()
	o, err := t.SQL.Collect(rows, inv)
	if errors.Is(err, ErrUseRun) {
		return ran{}, true
	}
	return ran{o: o, err: err}, false
}
