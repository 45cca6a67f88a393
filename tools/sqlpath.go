package tools

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SQLBody is the fast path of a built-in whose work is one SQL statement
// against the gateway's own database, such as a search. The executor then
// records the call, runs the statement and stores the result in a single
// transaction and two round trips, instead of committing a running row,
// running the body and committing the result (see executeSQL). The tool's
// Run stays required: it answers whenever the fast path cannot.
//
// Webhook tools and slow bodies must not use it: the fast path holds a
// database connection, and the call's lock, while the statement runs.
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

// beginSQL opens a fast-path call: the idle bound, the call's lock, and a
// VXD01 failure when the call already has a row (migration 0024).
const beginSQL = `SELECT tool_call_begin($1, $2, $3)`

// sqlstateCallExists is tool_call_begin's failure for a call already
// recorded.
const sqlstateCallExists = "VXD01"

// executeSQL runs a call of a tool with an SQLBody in one transaction:
//
//	round trip 1: BEGIN; tool_call_begin (the idle bound, the call's lock,
//	              fail if the call has a row); the tool's statement
//	Go:           Collect the rows, check and shape the outcome
//	round trip 2: INSERT the finished row; COMMIT
//
// against four round trips and two commits on the general path (claim,
// the body's own statements, finish). The row is written once, finished:
// a running row that is then updated with a 4 KiB result costs the server
// a second heap tuple, its index entries and its WAL on every call.
//
// Why this keeps every guarantee of the general path:
//
//   - Exactly once. Every writer of a tool_calls row, the general path's
//     claim included, first takes the call's advisory lock, held until its
//     transaction ends. The owner holds it from tool_call_begin to COMMIT,
//     so a concurrent duplicate, on either path, waits. When it gets the
//     lock it sees the owner's committed row and replays it (it never sees
//     it running), and its pipeline stops before its own statement runs.
//     If the owner rolled back instead, its statement's work is undone, no
//     result was stored or returned, and the duplicate runs the call as its
//     first and only run. A body's effects and its result commit together
//     or not at all, which is stronger than the general path, where a
//     crash between body and finish leaves an interrupted row.
//   - Replay and 409. A call that already has a row takes the same
//     duplicate path as always: replay, wait, CONFLICT or NOT_FOUND.
//   - Bounded waits, no stale rows. The fast path never commits a running
//     row, so it leaves nothing to interrupt. A duplicate waits on the lock
//     instead, for at most its own deadline: the tool's timeout plus the
//     grace second, the deadline the general path gives a running row.
//     Then it claims again on the general path, which records a timeout or
//     replays what the owner stored. The owner's statement runs under the
//     same deadline, and the server ends the owner's session if its
//     transaction then sits idle as long again
//     (idle_in_transaction_session_timeout, for this transaction only). So
//     a replica that stalls or dies between the two round trips releases
//     the lock, and its result is never stored.
//   - Failures are recorded. A tool error or panic in Collect is stored as
//     the call's failed result in the same transaction. If the statement
//     itself fails (a missing table, say) or Collect returns ErrUseRun,
//     the transaction is rolled back and the call goes down the general
//     path with Run; a statement that timed out is recorded as a timeout
//     without running again. Arguments the database cannot store are a
//     TOOL_VALIDATION_ERROR with nothing recorded, as on the general path.
//   - No connection is held while a slow body runs: only SQL bodies take
//     this path, and Run on the general path still runs with none held.
func (e *Executor) executeSQL(ctx context.Context, t *Tool, c *Call, args []byte, inv Invocation) (Result, error) {
	query, qargs, err := t.SQL.Build(inv)
	if err != nil {
		return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return e.settle(ctx, t, inv, ran{err: err}) })
	}
	conn, err := e.store.db.Acquire(ctx)
	if err != nil {
		return Result{}, classify("record the call", err)
	}
	// A connection still inside a transaction is destroyed, not reused.
	defer conn.Release()

	limit := t.Timeout + e.graceful
	// Like Run, the transaction is detached from the caller: once sent, it
	// runs to its result or its deadline.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	start := time.Now()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(beginSQL, c.SessionID, c.CallID, strconv.FormatInt(limit.Milliseconds(), 10))
	b.Queue(query, qargs...)
	br := conn.SendBatch(tctx, b)

	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err != nil {
		_ = br.Close()
		// Everything below takes its own connections: release this one
		// first, or callers waiting on each other could drain the pool.
		end(ctx, conn)
		var pre pgx.ErrPreprocessingBatch
		switch {
		case sqlstate(err) == sqlstateCallExists:
			return e.duplicate(ctx, t, c, args)
		case errors.As(err, &pre) && pre.SQL() == query:
			// The tool's statement could not be prepared (a missing table,
			// say), so nothing in the batch ran.
			e.log.WarnContext(ctx, "tool statement failed; answering with the tool body", "tool", t.Name, "err", err)
			return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return e.run(ctx, t, inv) })
		case tctx.Err() != nil:
			// The server sends a pipeline's results when it reaches the end,
			// so a deadline here may be the statement's or a wait on another
			// replica's lock. Nothing was stored: claim again on the general
			// path, which records the timeout or finds the other's answer.
			return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return timeoutResult(t), outcomeTimeout })
		}
		return Result{}, classify("record the call", err)
	}

	rows, err := br.Query()
	var r ran
	useRun := false
	if err == nil {
		r, useRun = e.collect(ctx, t, inv, rows)
		rows.Close()
		err = rows.Err()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil || useRun {
		end(ctx, conn)
		switch {
		case tctx.Err() != nil:
			return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return timeoutResult(t), outcomeTimeout })
		case err != nil:
			e.log.WarnContext(ctx, "tool statement failed; answering with the tool body", "tool", t.Name, "err", err)
		}
		return e.claimAndRun(ctx, t, c, args, func() (Result, string) { return e.run(ctx, t, inv) })
	}

	res, outcome := e.settle(ctx, t, inv, r)
	took := time.Since(start)
	res.CallID = c.CallID
	resp, status, code, err := encodeResult(&res)
	if err != nil {
		end(ctx, conn)
		return Result{}, err
	}
	b = &pgx.Batch{}
	b.Queue(recordSQL, c.SessionID, c.CallID, c.Principal.UserID, string(c.SessionKind), c.Source, c.Name, args,
		status, resp, code, limit.Seconds(), took.Milliseconds())
	b.Queue("COMMIT")
	// The caller may have gone; the result must still be stored.
	br = conn.SendBatch(context.WithoutCancel(ctx), b)
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		end(ctx, conn)
		if isDataException(err) {
			return Result{}, classify("record the call", err)
		}
		// The commit may or may not have happened (or the server ended an
		// idle transaction, or a writer that takes no lock got there
		// first): whatever is stored now is the answer.
		e.log.WarnContext(ctx, "storing a tool result failed", "tool", t.Name, "err", err)
		return e.duplicate(ctx, t, c, args)
	}
	e.observe(t, outcome, took)
	return res, nil
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

// end rolls the fast path's transaction back and returns the connection to
// the pool. When the rollback fails the connection is still inside the
// transaction, and Release destroys it.
func end(ctx context.Context, conn *pgxpool.Conn) {
	_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	conn.Release()
}
