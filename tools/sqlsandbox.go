package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/database"
)

// The sandbox every SQL tool's statement runs in (DESIGN §8).
const (
	// ReaderRole is the role a statement runs as (migration 0055): no
	// BYPASSRLS, owns nothing, no EXECUTE on set_config, SELECT only on
	// what SQL tools declare.
	ReaderRole = "voxgate_reader"
	// UserSetting is the setting row-level-security policies key on:
	// USING (user_id = current_setting('voxgate.user_id', true)).
	UserSetting = "voxgate.user_id"
	// MaxSQLRows is the most rows a SQL tool returns; the model is told
	// when more matched.
	MaxSQLRows = 100
	// DefaultStatementTimeout bounds one statement; it is below the tool's
	// default timeout so the model hears "the query took too long" rather
	// than the executor's generic timeout.
	DefaultStatementTimeout = 3 * time.Second
)

// sandbox runs one statement for one user.
type sandbox struct {
	db      *pgxpool.Pool
	timeout time.Duration // statement_timeout
	// searchPath resolves unqualified view names: the declared views'
	// schemas. pg_catalog stays implicitly first, so a name never
	// resolves to a catalog through it (the checker refuses catalogs).
	searchPath string
	// open marks a statement written by a model: it is sent as given, in
	// its own unnamed prepared statement, so it never fills the
	// connection's statement cache.
	open bool
}

// sqlRows is a statement's answer as the model and the app read it.
type sqlRows struct {
	Columns  []string `json:"columns"`
	Rows     [][]any  `json:"rows"`
	RowCount int      `json:"row_count"`
	// More says rows beyond MaxSQLRows matched and were cut.
	More bool   `json:"more_rows,omitempty"`
	Note string `json:"note,omitempty"`
}

const moreRowsNote = "More than 100 rows matched; only the first 100 are here. Aggregate or narrow the question to see everything."

// setupSQL is the gateway's own statement: the user's id for the
// row-level-security policies, the statement timeout and the search path,
// set before the role switch (the reader may not call set_config).
const setupSQL = `SELECT set_config('` + UserSetting + `', $1, true), set_config('statement_timeout', $2, true),
	set_config('search_path', $3, true)`

// query runs stmt with args for userID: BEGIN READ ONLY, the gateway's
// setupSQL, SET LOCAL ROLE, stmt, ROLLBACK, sent together in one round
// trip. The server runs them in order, so stmt is parsed, planned and run
// as the reader, inside the read-only transaction, with the user's id set.
// If anything fails the server skips the rest, and the transaction is
// rolled back after. A fixed statement is prepared on the connection once,
// as the gateway; an open one is parsed afresh each time and never cached.
// Failures are ToolErrors the model can read (a timeout, a refused
// privilege, a bad column) or an error of the gateway's own.
func (s *sandbox) query(ctx context.Context, userID, stmt string, args []any) (sqlRows, error) {
	conn, err := s.db.Acquire(ctx)
	if err != nil {
		return sqlRows{}, err
	}
	// Release destroys a connection left in a transaction or closed.
	defer conn.Release()
	pc := conn.Conn().PgConn()
	text := []int16{pgx.TextFormatCode}
	var b pgconn.Batch
	b.ExecParams("BEGIN READ ONLY", nil, nil, nil, nil)
	b.ExecParams(setupSQL, [][]byte{[]byte(userID), []byte(strconv.FormatInt(s.timeout.Milliseconds(), 10)),
		[]byte(s.searchPath)}, nil, nil, nil)
	b.ExecParams("SET LOCAL ROLE "+ReaderRole, nil, nil, nil, nil)
	if s.open {
		b.ExecParams(stmt, nil, nil, nil, text)
	} else {
		sd, err := conn.Conn().Prepare(ctx, stmt, stmt)
		if err != nil {
			return sqlRows{}, err
		}
		params := make([][]byte, len(args))
		for i, a := range args {
			params[i] = textParam(a)
		}
		b.ExecStatement(sd, params, nil, text)
	}
	b.ExecParams("ROLLBACK", nil, nil, nil, nil)

	mrr := pc.ExecBatch(ctx, &b)
	var out sqlRows
	var got bool
	for i := 0; mrr.NextResult(); i++ {
		rr := mrr.ResultReader()
		if i == 3 {
			out, got = collect(rr), true
		}
		if _, err := rr.Close(); err != nil {
			break
		}
	}
	err = mrr.Close()
	if pc.TxStatus() != 'I' && !pc.IsClosed() {
		_ = pc.Exec(context.WithoutCancel(ctx), "ROLLBACK").Close()
	}
	if err != nil {
		return sqlRows{}, statementError(err, s.timeout)
	}
	if !got {
		return sqlRows{}, errors.New("tools: the sandbox's statement gave no result")
	}
	return out, nil
}

// collect reads at most MaxSQLRows rows, and one more to learn whether
// there are more; the caller's Close drains the rest, which
// statement_timeout bounds. Values come as text and become JSON numbers,
// booleans, objects or strings by column type.
func collect(rr *pgconn.ResultReader) sqlRows {
	fields := rr.FieldDescriptions()
	out := sqlRows{Columns: make([]string, len(fields)), Rows: [][]any{}}
	for i, f := range fields {
		out.Columns[i] = f.Name
	}
	for rr.NextRow() {
		if len(out.Rows) == MaxSQLRows {
			out.More = true
			out.Note = moreRowsNote
			break
		}
		raw := rr.Values()
		row := make([]any, len(raw))
		for i, v := range raw {
			row[i] = jsonValue(fields[i].DataTypeOID, v)
		}
		out.Rows = append(out.Rows, row)
	}
	out.RowCount = len(out.Rows)
	return out
}

// textParam is a fixed tool's argument in PostgreSQL's text format, which
// the server reads as the placeholder's type: nil is NULL, a list of
// strings is a text[] literal.
func textParam(v any) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return []byte(x)
	case bool:
		return []byte(strconv.FormatBool(x))
	case []string:
		var sb strings.Builder
		sb.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteByte('"')
			sb.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e))
			sb.WriteByte('"')
		}
		sb.WriteByte('}')
		return []byte(sb.String())
	}
	return []byte(fmt.Sprint(v))
}

func jsonValue(oid uint32, v []byte) any {
	if v == nil {
		return nil
	}
	s := string(v)
	switch oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.NumericOID, pgtype.Float4OID, pgtype.Float8OID:
		if json.Valid(v) { // not NaN or Infinity
			return json.Number(s)
		}
	case pgtype.BoolOID:
		return s == "t"
	case pgtype.JSONOID, pgtype.JSONBOID:
		if json.Valid(v) {
			return json.RawMessage(s)
		}
	}
	return s
}

// statementError turns a failed statement into what the model reads. The
// message never repeats the statement.
func statementError(err error, timeout time.Duration) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	code := pe.Code
	switch {
	case code == database.QueryCanceled: // statement_timeout
		return Failf("query_timeout", "The query ran longer than %s and was stopped. Ask for less: a narrower time range, or an aggregate.", timeout)
	case code == database.InsufficientPrivilege || code == database.ReadOnlyTransaction ||
		database.InClass(code, database.ClassInvalidAuthorization):
		return Failf("query_refused", "The query was refused: only reading the listed views is allowed.")
	case database.InClass(code, database.ClassSyntaxOrAccess) || database.InClass(code, database.ClassData) ||
		database.InClass(code, database.ClassCardinality):
		// Syntax, undefined names, bad values: the model can fix these.
		return Failf("query_error", "The query failed: %s.", strings.TrimSuffix(pe.Message, "."))
	case code == database.StatementTooComplex:
		return Failf("query_error", "The query is too complex.")
	}
	return err
}

// CheckSQLSandbox checks, at startup, that the database holds what the
// sandbox relies on (migration 0055, which needs a superuser for part of
// it): the reader role exists, bypasses no row-level security and is not a
// superuser; the gateway's role may switch to it; and the reader may not
// call set_config. A gateway with SQL tools refuses to start otherwise.
func CheckSQLSandbox(ctx context.Context, db *pgxpool.Pool) error {
	var exists, member, super, bypass, setConfig bool
	err := db.QueryRow(ctx, `SELECT r.rolname IS NOT NULL,
		coalesce(pg_has_role(current_user, r.oid, 'MEMBER'), false),
		coalesce(r.rolsuper, false), coalesce(r.rolbypassrls, false),
		coalesce(has_function_privilege(r.oid, 'pg_catalog.set_config(text, text, boolean)', 'EXECUTE'), false)
		FROM (SELECT 1) one LEFT JOIN pg_roles r ON r.rolname = $1`, ReaderRole).
		Scan(&exists, &member, &super, &bypass, &setConfig)
	switch {
	case err != nil:
		return fmt.Errorf("tools: check the SQL sandbox: %w", err)
	case !exists:
		return fmt.Errorf("tools: SQL tools need the role %s (migration 0055 could not create it: see its warning)", ReaderRole)
	case !member:
		return fmt.Errorf("tools: SQL tools need the gateway's database user to be a member of %s (GRANT %s TO <user>)", ReaderRole, ReaderRole)
	case super || bypass:
		return fmt.Errorf("tools: %s must be neither a superuser nor BYPASSRLS", ReaderRole)
	case setConfig:
		return fmt.Errorf("tools: %s may call set_config, so a statement could change the user the row-level-security policies see; "+
			"a superuser runs: REVOKE EXECUTE ON FUNCTION set_config(text, text, boolean) FROM PUBLIC, then grants it to the gateway's user", ReaderRole)
	}
	return nil
}
