package tools

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
)

// beginSQL opens a batch: the idle bound, the calls' locks, and a VXD01
// failure when any call already has a row (migration 0024).
const beginSQL = `SELECT tool_call_begin($1::text[], $2::text[], $3)`

// sqlstateCallExists is tool_call_begin's failure for a call already
// recorded.
const sqlstateCallExists = "VXD01"

// runBatch runs jobs, calls of one tool, in one transaction:
//
//	round trip 1: BEGIN; tool_call_begin (the idle bound, the calls' locks,
//	              fail if any call has a row); each call's statement
//	Go:           Collect each call's rows, check and shape its outcome
//	round trip 2: INSERT the finished rows; COMMIT
//
// against four round trips and two commits per call on the general path
// (claim, the body's own statements, finish). Each row is written once,
// finished: a running row that is then updated with a 4 KiB result costs
// the server a second heap tuple, its index entries and its WAL.
//
// Why this keeps every guarantee of the general path:
//
//   - Exactly once. Every writer of a tool_calls row, the general path's
//     claim included, first takes the call's advisory lock, held until its
//     transaction ends. A batch holds its calls' locks from tool_call_begin
//     to COMMIT, so a concurrent duplicate, on either path, waits. When it
//     gets the lock it sees the committed row and replays it (it never
//     sees it running), and its pipeline stops before its statement runs.
//     If the batch rolled back instead, no result was stored or returned,
//     and the duplicate runs the call as its first and only answered run.
//   - Replay and 409. A call that already has a row takes the same
//     duplicate path as always: replay, wait, CONFLICT or NOT_FOUND.
//   - One call cannot fail another, and none runs twice. When a batch of
//     several fails (a duplicate among them, a statement error, the
//     deadline, the insert), nothing of it was stored or returned. Calls
//     whose rows were already collected keep their answers, which are
//     locked, checked and stored in a transaction of their own
//     (storeAnswered); the others run again in a batch of their own, whose
//     failures are handled as below.
//   - Bounded waits, no stale rows. The fast path never commits a running
//     row, so it leaves nothing to interrupt. A duplicate waits on the lock
//     instead, for at most its own deadline: the tool's timeout plus the
//     grace second, the deadline the general path gives a running row.
//     Then it claims on the general path, which records a timeout or
//     replays what the owner stored. The batch's statements run under the
//     same deadline, and the server ends the batch's session if its
//     transaction then sits idle as long again
//     (idle_in_transaction_session_timeout, for this transaction only). So
//     a replica that stalls or dies between the two round trips releases
//     the locks, and its results are never stored.
//   - Failures are recorded. A tool error or panic in Collect is stored as
//     the call's failed result in the same transaction. If a lone call's
//     statement fails (a missing table, say) or Collect returns ErrUseRun,
//     the call goes down the general path with Run; a statement that timed
//     out is recorded as a timeout without running again. Arguments the
//     database cannot store are a TOOL_VALIDATION_ERROR with nothing
//     recorded, as on the general path.
//   - No connection is held while a slow body runs: only SQL bodies take
//     this path, and Run on the general path still runs with none held.
func (e *Executor) runBatch(jobs []*sqlJob) {
	t := jobs[0].t
	limit := t.Timeout + e.graceful
	// Detached from every caller: once sent, a batch runs to its end or
	// its deadline, and one caller going away cannot cancel the others.
	tctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	conn, err := e.store.db.Acquire(tctx)
	if err != nil {
		if tctx.Err() != nil {
			err = apierr.Wrap(apierr.Unavailable, "", err).WithRetry(1)
		}
		fail(jobs, classify("record the call", err))
		return
	}
	// A connection still inside a transaction is destroyed, not reused.
	defer conn.Release()

	e.metrics.batches.WithLabelValues(t.Name).Observe(float64(len(jobs)))
	sessions, calls := keys(jobs)
	start := time.Now()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(beginSQL, sessions, calls, strconv.FormatInt(limit.Milliseconds(), 10))
	for _, j := range jobs {
		b.Queue(j.query, j.qargs...)
	}
	br := conn.SendBatch(tctx, b)
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err != nil {
		_ = br.Close()
		end(conn)
		e.beginFailed(jobs, tctx, err)
		return
	}
	for _, j := range jobs {
		rows, err := br.Query()
		if err == nil {
			r, useRun := e.collect(j.ctx, t, j.inv, rows)
			rows.Close()
			if err = rows.Err(); err == nil {
				e.settleJob(j, r, useRun, start)
			}
		}
		if err != nil {
			_ = br.Close()
			end(conn)
			e.statementFailed(jobs, tctx, err, limit)
			return
		}
	}
	if err := br.Close(); err != nil {
		end(conn)
		e.statementFailed(jobs, tctx, err, limit)
		return
	}
	e.record(conn, jobs, limit)
}

// settleJob turns what a call's Collect gave into its answer, to be stored.
func (e *Executor) settleJob(j *sqlJob, r ran, useRun bool, start time.Time) {
	if useRun {
		j.next = nextRun
		return
	}
	res, outcome := e.settleSafe(j, r)
	res.CallID = j.c.CallID
	j.took = time.Since(start)
	resp, status, code, err := encodeResult(&res)
	if err != nil {
		j.next, j.err = nextFailed, err
		return
	}
	j.next, j.res, j.outcome, j.resp, j.status, j.code = nextAnswered, res, outcome, resp, status, code
}

// settleSafe is settle with panic recovery. Shaping runs tool code (a
// MarshalJSON method, say), here on a batch's goroutine, where a panic
// would end the process rather than one request.
func (e *Executor) settleSafe(j *sqlJob, r ran) (res Result, outcome string) {
	defer func() {
		if p := recover(); p != nil {
			e.logPanic(j.ctx, j.t, j.inv, p)
			res, outcome = e.settle(j.ctx, j.t, j.inv, ran{panicked: true})
		}
	}()
	return e.settle(j.ctx, j.t, j.inv, r)
}

// record stores the answered calls of a batch and commits; the others
// (ErrUseRun, an unencodable result) are left out and go on as they are.
func (e *Executor) record(conn *pgxpool.Conn, jobs []*sqlJob, limit time.Duration) {
	stored := answered(jobs)
	if len(stored) == 0 {
		end(conn)
		return
	}
	b := &pgx.Batch{}
	queueRecord(b, stored, limit)
	b.Queue("COMMIT")
	if err := e.sendStore(conn, b, limit); err != nil {
		end(conn)
		// Committed or not, storing again finds out.
		e.storeAnswered(stored, limit)
		return
	}
	e.observeStored(stored)
}

// storeAnswered stores answers a failed transaction had already worked
// out, in a transaction of their own, so their calls are not run again:
// it locks and checks them as tool_call_begin always does, then inserts.
// When several fail together, each is stored on its own; a lone one that
// fails is a duplicate (its row is there, or the commit's fate is unknown
// and whatever is stored is the answer) or arguments the database refused.
func (e *Executor) storeAnswered(jobs []*sqlJob, limit time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	conn, err := e.store.db.Acquire(ctx)
	if err == nil {
		defer conn.Release()
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		sessions, calls := keys(jobs)
		b.Queue(beginSQL, sessions, calls, strconv.FormatInt(limit.Milliseconds(), 10))
		queueRecord(b, jobs, limit)
		b.Queue("COMMIT")
		if err = e.sendStore(conn, b, limit); err == nil {
			e.observeStored(jobs)
			return
		}
		end(conn)
	}
	if len(jobs) > 1 {
		for _, j := range jobs {
			e.storeAnswered([]*sqlJob{j}, limit)
		}
		return
	}
	j := jobs[0]
	if isDataException(err) {
		j.next, j.err = nextFailed, classify("record the call", err)
		return
	}
	if sqlstate(err) != sqlstateCallExists {
		e.log.WarnContext(j.ctx, "storing a tool result failed", "tool", j.t.Name, "err", err)
	}
	j.next = nextDuplicate
}

// sendStore sends b, whose statements return no rows, and reads every
// result. The callers may have gone; the results must still be stored.
func (e *Executor) sendStore(conn *pgxpool.Conn, b *pgx.Batch, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	br := conn.SendBatch(ctx, b)
	var err error
	for range b.Len() {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// queueRecord queues recordSQL for jobs: one statement, one array element
// per call.
func queueRecord(b *pgx.Batch, jobs []*sqlJob, limit time.Duration) {
	n := len(jobs)
	cols := make([][]string, 9)
	for i := range cols {
		cols[i] = make([]string, n)
	}
	codes, took := make([]*string, n), make([]int32, n)
	for i, j := range jobs {
		c := j.c
		for k, v := range [...]string{c.SessionID, c.CallID, c.Principal.UserID, string(c.SessionKind), c.Source,
			c.Name, string(j.args), j.status, string(j.resp)} {
			cols[k][i] = v
		}
		codes[i], took[i] = j.code, int32(min(j.took.Milliseconds(), 1<<31-1))
	}
	b.Queue(recordSQL, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], codes, took,
		limit.Seconds())
}

// observeStored counts calls whose answers were stored.
func (e *Executor) observeStored(jobs []*sqlJob) {
	for _, j := range jobs {
		e.observe(j.t, j.outcome, j.took)
	}
}

func answered(jobs []*sqlJob) []*sqlJob {
	var out []*sqlJob
	for _, j := range jobs {
		if j.next == nextAnswered {
			out = append(out, j)
		}
	}
	return out
}

func keys(jobs []*sqlJob) (sessions, calls []string) {
	sessions, calls = make([]string, len(jobs)), make([]string, len(jobs))
	for i, j := range jobs {
		sessions[i], calls[i] = j.c.SessionID, j.c.CallID
	}
	return sessions, calls
}

// beginFailed sorts out a batch whose BEGIN or tool_call_begin failed:
// nothing in it ran.
func (e *Executor) beginFailed(jobs []*sqlJob, tctx context.Context, err error) {
	if len(jobs) > 1 {
		alone(jobs)
		return
	}
	j := jobs[0]
	var pre pgx.ErrPreprocessingBatch
	switch {
	case sqlstate(err) == sqlstateCallExists:
		j.next = nextDuplicate
	case errors.As(err, &pre) && pre.SQL() == j.query:
		// The tool's statement could not be prepared (a missing table,
		// say), so nothing in the batch ran.
		e.log.WarnContext(j.ctx, "tool statement failed; answering with the tool body", "tool", j.t.Name, "err", err)
		j.next = nextRun
	case tctx.Err() != nil:
		// The server sends a pipeline's results when it reaches the end,
		// so a deadline here may be the statement's or a wait on another
		// replica's lock.
		j.next = nextTimeout
	default:
		j.next, j.err = nextFailed, classify("record the call", err)
	}
}

// statementFailed sorts out a batch whose statements failed or overran.
// In a batch of several, the calls whose rows were already collected keep
// their answers, stored in a transaction of their own; the others run
// again alone.
func (e *Executor) statementFailed(jobs []*sqlJob, tctx context.Context, err error, limit time.Duration) {
	if len(jobs) > 1 {
		for _, j := range jobs {
			if j.next == nextPending {
				j.next = nextAlone
			}
		}
		if done := answered(jobs); len(done) > 0 {
			e.storeAnswered(done, limit)
		}
		return
	}
	j := jobs[0]
	if tctx.Err() != nil {
		j.next = nextTimeout
		return
	}
	e.log.WarnContext(j.ctx, "tool statement failed; answering with the tool body", "tool", j.t.Name, "err", err)
	j.next = nextRun
}

func alone(jobs []*sqlJob) {
	for _, j := range jobs {
		j.next = nextAlone
	}
}

func fail(jobs []*sqlJob, err error) {
	for _, j := range jobs {
		j.next, j.err = nextFailed, err
	}
}

// end rolls a batch's transaction back and returns the connection to the
// pool. When the rollback fails the connection is still inside the
// transaction, and Release destroys it.
func end(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, "ROLLBACK")
	conn.Release()
}
