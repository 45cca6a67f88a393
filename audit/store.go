package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/page"
)

// DB is what the log needs of PostgreSQL: a pool or a transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Log reads and writes the audit log.
type Log struct{ db DB }

// New returns the log over db.
func New(db DB) *Log { return &Log{db: db} }

// beginSQL inserts the unit's row into ai_audit_pending, the units in
// flight: the log itself is append-only, one final row per unit
// (docs/audit.md, "Append-only"). A unit that began already (a retried
// voice tool call) keeps its first pending row, and one that finished
// already (checked in the log by its primary key) gets none. The check
// reads the months of the last lookBack only: once the log is partitioned
// by month (the next release's migration, docs/audit.md "Partitions,
// next"), a lookup by turn_id alone would probe every partition kept, on
// every unit; a retry comes within its session.
const beginSQL = `INSERT INTO ai_audit_pending
	(turn_id, kind, user_id, session_id, call_id, tool, route, input_hash)
SELECT $1, $2, $3, $4, $5, $6, $7, $8
WHERE NOT EXISTS (SELECT 1 FROM ai_audit_log WHERE turn_id = $1 AND created_at > now() - ` + lookBack + `)%s
ON CONFLICT (turn_id) DO NOTHING`

// lookBack is how far before a unit's begin its final row is looked for
// when a begin or an end that has a pending row checks the log: retries
// come within a session, and the bound lets the lookup read a month or
// two of partitions instead of all of them (docs/audit.md "Partitions").
const lookBack = `interval '1 month'`

// Begin records r as pending, before the unit's work (the model call, the
// tool) starts: a crash leaves it pending, and a pending unit older than
// its kind's deadline is abandoned work (docs/audit.md).
func (l *Log) Begin(ctx context.Context, r Row) error {
	r.Status = Pending
	if err := r.check(); err != nil {
		return err
	}
	_, err := l.db.Exec(ctx, fmt.Sprintf(beginSQL, ""), r.ID, r.Kind, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route, r.InputHash)
	return database.Error("audit: begin a row", err)
}

// QueueBeginIf queues Begin's insert on b, to be made only if the SQL
// function onlyIf (of one text argument, the row's user id) is true in
// b's transaction: a chat unit's pending row rides its admission
// (quota.Rider, quota.AdmittedSQL), so it costs no round trip and no
// commit of its own and exists only for an admitted unit. onlyIf is the
// caller's constant, never user input. The row is checked here, so the
// statement cannot fail on it and take the batch down.
func (l *Log) QueueBeginIf(b *pgx.Batch, r Row, onlyIf string) error {
	r.Status = Pending
	if err := r.check(); err != nil {
		return err
	}
	for _, v := range []string{r.ID, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route, r.InputHash} {
		// Text PostgreSQL refuses (a NUL byte, invalid UTF-8) would fail
		// every unit of the batch this row rides, not just its own.
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return apierr.Wrap(apierr.Internal, "", errors.New("audit: a row's text is not storable"))
		}
	}
	b.Queue(fmt.Sprintf(beginSQL, " AND "+pgx.Identifier{onlyIf}.Sanitize()+"($3)"),
		r.ID, r.Kind, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route, r.InputHash)
	return nil
}

// abandonedSQL ends a pending unit that was admitted after its caller went
// away, as a turn cut short ends (docs/audit.md): its pending row becomes
// a final log row, refused, error_code cancelled, in one statement. A unit
// already final (checked by turn_id: once partitioned, the log's key holds
// created_at), or not pending, is left alone.
const abandonedSQL = `WITH p AS (DELETE FROM ai_audit_pending WHERE turn_id = $1 RETURNING *)
INSERT INTO ai_audit_log
	(turn_id, kind, user_id, session_id, call_id, tool, route, status, error_code, failover_trace,
	 input_hash, duration_ms, created_at, finished_at)
SELECT turn_id, kind, user_id, session_id, call_id, tool, route, 'refused', 'cancelled', '[]',
	input_hash, 0, created_at, now() FROM p
WHERE NOT EXISTS (SELECT 1 FROM ai_audit_log WHERE turn_id = $1)
ON CONFLICT ON CONSTRAINT ai_audit_log_pkey DO NOTHING`

// QueueAbandoned queues the end of a pending unit that never ran: its
// admission came back after the caller had gone (quota.Rider.Abandoned).
func (l *Log) QueueAbandoned(b *pgx.Batch, id string) {
	b.Queue(abandonedSQL, id)
}

// finishSQL inserts a unit's final row, once, and deletes its pending row
// in the same statement; the final row keeps the pending row's created_at
// (the unit's start) and its input_hash when the end has none. A unit
// whose pending row is missing (its start predates this release, say) gets
// its final row inserted whole, so its end is never lost. A pending row of
// another user or kind under the id is neither deleted nor answered by a
// final row of this unit's. The ON CONFLICT branch moves a pending row a
// replica of release 0088 wrote into the log itself (docs/audit.md,
// "Rollout"); a row final already is left as it is and no row comes back.
//
// Once the log is partitioned by month its key is (turn_id, created_at),
// so every end of one unit must write the same
// created_at (docs/audit.md "Partitions"). With a pending row (s): the
// unit's row in the log if one began in the lookBack before it (a final
// row the stale pending row of a retried begin outlived), else the pending
// row's. s is read from the statement's snapshot, not from the CTE's
// RETURNING: a concurrent end that deleted the row after this statement
// began still gives the start, so this insert meets that end's row on the
// key and waits for it, as under the narrow key. Without one: the unit's
// row in the log, in any month (a replay, a second end, a 0088 pending
// row), else now(). The bounded lookup keeps the common end to a month or
// two of partitions. (The CTE and every sub-select read one snapshot.)
const finishSQL = `WITH p AS (
	DELETE FROM ai_audit_pending WHERE turn_id = $1 AND user_id = $3 AND kind = $2),
s AS (SELECT created_at, input_hash FROM ai_audit_pending WHERE turn_id = $1 AND user_id = $3 AND kind = $2)
INSERT INTO ai_audit_log AS a
	(turn_id, kind, user_id, session_id, call_id, tool, route, provider, model, status, error_code,
	 failover_trace, filters_ran, rule_ids, input_hash, output_hash, duration_ms, created_at, finished_at)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
	CASE WHEN $15 = '' THEN coalesce((SELECT input_hash FROM s), '') ELSE $15 END,
	$16, $17, CASE WHEN EXISTS (SELECT 1 FROM s) THEN coalesce(
		(SELECT created_at FROM ai_audit_log WHERE turn_id = $1 AND created_at <= (SELECT created_at FROM s)
			AND created_at > (SELECT created_at FROM s) - ` + lookBack + ` LIMIT 1),
		(SELECT created_at FROM s))
	ELSE coalesce((SELECT created_at FROM ai_audit_log WHERE turn_id = $1 LIMIT 1), now()) END, now()
WHERE NOT EXISTS (SELECT 1 FROM ai_audit_pending o WHERE o.turn_id = $1 AND (o.user_id <> $3 OR o.kind <> $2))
ON CONFLICT ON CONSTRAINT ai_audit_log_pkey DO UPDATE SET
	route = EXCLUDED.route, provider = EXCLUDED.provider, model = EXCLUDED.model,
	status = EXCLUDED.status, error_code = EXCLUDED.error_code, failover_trace = EXCLUDED.failover_trace,
	filters_ran = EXCLUDED.filters_ran, rule_ids = EXCLUDED.rule_ids,
	input_hash = CASE WHEN EXCLUDED.input_hash = '' THEN a.input_hash ELSE EXCLUDED.input_hash END,
	output_hash = EXCLUDED.output_hash, duration_ms = EXCLUDED.duration_ms, finished_at = now()
WHERE a.status = 'pending' AND a.user_id = EXCLUDED.user_id AND a.kind = EXCLUDED.kind
RETURNING 1`

// Finish records r's end: r.Status, a final status. A replay
// of the same end changes nothing and returns nil; a different final
// status for a row that has one is refused with ErrFinal (as a CONFLICT),
// and the first stands. Success with a required filter missing is refused
// before it reaches the database, which refuses it too.
func (l *Log) Finish(ctx context.Context, r Row) error {
	f, args, err := l.prepareFinish(r)
	if err != nil {
		return err
	}
	f.scan(l.db.QueryRow(ctx, finishSQL, args...))
	return f.Err(ctx)
}

// Finishing is a row's move to its final status queued on a batch by
// QueueFinish.
type Finishing struct {
	l     *Log
	r     Row
	final bool // the row was final already, or is not this unit's
	err   error
}

// QueueFinish queues Finish's statement on b, so that a unit's audit row,
// its records and its settlement reach PostgreSQL in one round trip and
// commit together. Once b is sent, Err says what Finish would have.
func (l *Log) QueueFinish(b *pgx.Batch, r Row) (*Finishing, error) {
	f, args, err := l.prepareFinish(r)
	if err != nil {
		return nil, err
	}
	b.Queue(finishSQL, args...).QueryRow(func(row pgx.Row) error {
		f.scan(row)
		return nil
	})
	return f, nil
}

func (l *Log) prepareFinish(r Row) (*Finishing, []any, error) {
	if r.Status == Pending {
		return nil, nil, apierr.Wrap(apierr.Internal, "", errors.New("audit: Finish needs a final status"))
	}
	if err := r.check(); err != nil {
		return nil, nil, err
	}
	trace, err := json.Marshal(nonNil(r.FailoverTrace))
	if err != nil {
		return nil, nil, apierr.Wrap(apierr.Internal, "", err)
	}
	return &Finishing{l: l, r: r}, []any{r.ID, r.Kind, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route,
		r.Provider, r.Model, r.Status, r.ErrorCode, trace, nonNil(r.FiltersRan), nonNil(r.RuleIDs),
		r.InputHash, r.OutputHash, max(r.DurationMS, 0)}, nil
}

func (f *Finishing) scan(row pgx.Row) {
	var one int
	err := row.Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		f.final = true
	case err != nil:
		f.err = database.Error("audit: finish a row", err)
	}
}

// Err is nil once the row moved (or a replay found it as moved already),
// else why not. A row that was final already is read with the log's
// database to tell a replay from a second, different end.
func (f *Finishing) Err(ctx context.Context) error {
	if f.err != nil || !f.final {
		return f.err
	}
	r := f.r
	var have Status
	if err := f.l.db.QueryRow(ctx, `SELECT status FROM ai_audit_log WHERE turn_id = $1 AND user_id = $2 AND kind = $3`,
		r.ID, r.UserID, r.Kind).Scan(&have); err != nil {
		if errors.Is(err, pgx.ErrNoRows) { // the id is another user's or kind's
			return apierr.Wrap(apierr.Conflict, "", fmt.Errorf("audit: row %s belongs to another unit", r.ID))
		}
		return database.Error("audit: read a finished row", err)
	}
	if have == r.Status {
		return nil
	}
	return apierr.Wrap(apierr.Conflict, "", fmt.Errorf("%w: %s is %s, not moved to %s", ErrFinal, r.ID, have, r.Status))
}

const rowColumns = `turn_id, kind, user_id, session_id, call_id, tool, route, provider, model, status,
	error_code, failover_trace, filters_ran, rule_ids, input_hash, output_hash, duration_ms, created_at, finished_at`

func scanRow(s pgx.Row) (Row, error) {
	var r Row
	var trace []byte
	err := s.Scan(&r.ID, &r.Kind, &r.UserID, &r.SessionID, &r.CallID, &r.Tool, &r.Route, &r.Provider, &r.Model,
		&r.Status, &r.ErrorCode, &trace, &r.FiltersRan, &r.RuleIDs, &r.InputHash, &r.OutputHash, &r.DurationMS,
		&r.CreatedAt, &r.FinishedAt)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(trace, &r.FailoverTrace); err != nil {
		return r, fmt.Errorf("audit: failover_trace of %s: %w", r.ID, err)
	}
	r.FailoverTrace, r.FiltersRan, r.RuleIDs = nonNil(r.FailoverTrace), nonNil(r.FiltersRan), nonNil(r.RuleIDs)
	return r, nil
}

// pendingColumns are rowColumns of an ai_audit_pending row: a unit in
// flight, as a pending row of the log would show it.
const pendingColumns = `turn_id, kind, user_id, session_id, call_id, tool, route, '', '', 'pending',
	'', '[]'::jsonb, '{}'::text[], '{}'::text[], input_hash, '', 0::bigint, created_at, NULL::timestamptz`

// notLogged keeps out a pending row whose unit has a log row: a stale one
// (a replica of release 0088 finished the unit, docs/audit.md "Rollout"),
// until Sweep deletes it. OFFSET 0 keeps it a probe of the log's primary
// key per pending row: as a join, with many pending rows, the planner
// chose a hash anti-join that read the whole log (256 ms at 300 k rows,
// seconds at 10 M).
const notLogged = ` AND NOT EXISTS (SELECT 1 FROM ai_audit_log a WHERE a.turn_id = p.turn_id OFFSET 0)`

// Get is the row of unit id, pending or final; NOT_FOUND when there is
// none.
func (l *Log) Get(ctx context.Context, id string) (Row, error) {
	r, err := scanRow(l.db.QueryRow(ctx, `SELECT `+rowColumns+` FROM ai_audit_log WHERE turn_id = $1
UNION ALL
SELECT `+pendingColumns+` FROM ai_audit_pending p WHERE turn_id = $1`+notLogged, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, apierr.New(apierr.NotFound, "")
	}
	return r, database.Error("audit: read a row", err)
}

// Filter narrows a listing: rows created in [From, To), and when set, of
// one user, status and kind.
type Filter struct {
	From, To time.Time
	UserID   string
	Status   Status
	Kind     Kind
}

// List is the rows the filter selects, newest first, one page of them.
// Units in flight (ai_audit_pending) are merged into the log's order
// when the filter takes pending rows: that table is small, so its part
// is read whole and costs next to nothing beside the log's.
func (l *Log) List(ctx context.Context, f Filter, p page.Request) (page.List[Row], error) {
	conds := "created_at >= $1 AND created_at < $2"
	args := []any{f.From, f.To}
	add := func(cond string, v any) {
		args = append(args, v)
		conds += fmt.Sprintf(" AND "+cond, len(args))
	}
	if f.UserID != "" {
		add("user_id = $%d", f.UserID)
	}
	if f.Kind != "" {
		add("kind = $%d", f.Kind)
	}
	if !p.After.IsZero() {
		args = append(args, p.After.At, p.After.ID)
		conds += fmt.Sprintf(" AND (created_at, turn_id) < ($%d, $%d)", len(args)-1, len(args))
	}
	pendingConds := conds
	if f.Status != "" {
		add("status = $%d", f.Status)
	}
	args = append(args, p.Limit+1)
	order := fmt.Sprintf(` ORDER BY created_at DESC, turn_id DESC LIMIT $%d`, len(args))
	sql := `SELECT ` + rowColumns + ` FROM ai_audit_log WHERE ` + conds + order
	if f.Status == "" || f.Status == Pending {
		sql = `(` + sql + `) UNION ALL (SELECT ` + pendingColumns + ` FROM ai_audit_pending p WHERE ` +
			pendingConds + notLogged + order + `)` + order
	}
	rows, err := l.db.Query(ctx, sql, args...)
	if err != nil {
		return page.List[Row]{}, database.Error("audit: list rows", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return page.List[Row]{}, database.Error("audit: list rows", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return page.List[Row]{}, database.Error("audit: list rows", err)
	}
	return page.Make(out, p.Limit, func(r Row) page.Key { return page.Key{At: r.CreatedAt, ID: r.ID} }), nil
}

// sweepBatch bounds one Sweep: a stale pending row is rare (a unit a
// replica of release 0088 finished), so a batch this size clears any
// backlog in a few runs without a long statement.
const sweepBatch = 1000

// Sweep deletes pending rows whose unit has its row in the log already:
// stale ones, left when a replica of release 0088 finished a unit a newer
// replica began (docs/audit.md, "Rollout"). It reads the small pending
// table and probes the log's primary key per row, at most sweepBatch
// rows a call; it returns how many it deleted. chat.Service's purge runs
// it.
func (l *Log) Sweep(ctx context.Context) (int64, error) {
	tag, err := l.db.Exec(ctx, `DELETE FROM ai_audit_pending WHERE turn_id IN (
	SELECT turn_id FROM ai_audit_pending p
	WHERE EXISTS (SELECT 1 FROM ai_audit_log a WHERE a.turn_id = p.turn_id OFFSET 0) LIMIT $1)`, sweepBatch)
	if err != nil {
		return 0, database.Error("audit: sweep stale pending rows", err)
	}
	return tag.RowsAffected(), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
