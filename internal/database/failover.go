package database

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Failover: the URL may name several hosts with target_session_attrs=
// read-write (docs/operations.md, "PostgreSQL failover"), so a new
// connection goes to whichever server takes writes now. A connection
// already open is another matter: its server may have become read-only
// (default_transaction_read_only turned on for a switchover, a server that
// reports in_hot_standby) or refused a write with SQLSTATE 25006. Such a
// connection must leave the pool, or every statement that draws it fails
// until the pool's idle timeout, while the new primary sits unused. A
// reset connection is closed by pgx and destroyed by the pool already.

// readOnlyKey marks, in a connection's CustomData, a connection whose
// server refused a write as read-only.
const readOnlyKey = "voxgate.read_only"

// writable reports whether conn may go back to (or out of) the pool: open,
// on a server that takes writes as far as the server last said.
func writable(conn *pgx.Conn) bool {
	pc := conn.PgConn()
	if pc.IsClosed() {
		return false
	}
	// Both are reported by the server (GUC_REPORT, PostgreSQL 14 and
	// later) on every connection, whenever they change, so a promotion or
	// a reload that turns writes off reaches a connection that is open.
	if pc.ParameterStatus("in_hot_standby") == "on" || pc.ParameterStatus("default_transaction_read_only") == "on" {
		return false
	}
	_, refused := pc.CustomData()[readOnlyKey]
	return !refused
}

// dropReadOnly sets the pool's hooks that keep read-only connections out.
func dropReadOnly(cfg *pgxpool.Config) {
	cfg.AfterRelease = writable
	// At acquire too (after the pool's liveness ping, which reads what the
	// server reported while the connection sat idle): a connection found
	// read-only is destroyed and the pool tries another or dials anew.
	cfg.PrepareConn = func(_ context.Context, conn *pgx.Conn) (bool, error) {
		return writable(conn), nil
	}
}

// markReadOnly notes on conn that its server refused a write as read-only;
// AfterRelease then drops it.
func markReadOnly(conn *pgx.Conn, err error) {
	if conn != nil && err != nil && SQLState(err) == ReadOnlyTransaction {
		conn.PgConn().CustomData()[readOnlyKey] = true
	}
}
