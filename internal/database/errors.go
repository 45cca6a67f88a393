package database

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/voxgate/voxgate/internal/apierr"
)

// SQLSTATE codes and classes that callers tell apart.
const (
	UniqueViolation       = "23505"
	QueryCanceled         = "57014" // statement_timeout among others
	InsufficientPrivilege = "42501"
	ReadOnlyTransaction   = "25006"
	StatementTooComplex   = "54001"

	ClassData                 = "22" // bad values, e.g. a NUL in text or numeric overflow
	ClassCardinality          = "21"
	ClassInvalidAuthorization = "28"
	ClassSyntaxOrAccess       = "42" // syntax errors, undefined names, privileges
)

// InClass reports whether SQLSTATE code is of class (its first two characters).
func InClass(code, class string) bool { return len(code) == 5 && code[:2] == class }

// Error is the one classifier of database failures, for every package. A
// condition a client may simply retry (the server refused, timed out, shut
// down, is overloaded, or the pool is closing) is 503 UNAVAILABLE with
// Retry-After; a unique violation is 409 CONFLICT; anything else is 500
// INTERNAL. The cause, prefixed with op, is kept for the log and never shown.
func Error(op string, err error) error {
	if err == nil {
		return nil
	}
	cause := fmt.Errorf("%s: %w", op, err)
	if Transient(err) {
		return apierr.Wrap(apierr.Unavailable, "", cause).WithRetry(1)
	}
	if SQLState(err) == UniqueViolation {
		return apierr.Wrap(apierr.Conflict, "", cause)
	}
	return apierr.Wrap(apierr.Internal, "", cause)
}

// Transient reports whether err is a failure a client may retry: the
// database is unreachable, slow, shutting down or out of capacity, the
// connection dropped under a statement, the transaction lost a
// serialization race, or the server is read-only (a failover under way).
func Transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	if code := SQLState(err); code != "" {
		switch code {
		case "40001", "40P01", // serialization failure, deadlock
			"55P03",                   // lock not available
			QueryCanceled,             // statement_timeout
			"57P01", "57P02", "57P03", // admin shutdown, crash shutdown, cannot connect now
			// A server that became read-only mid-failover: the connection
			// leaves the pool (failover.go) and a retry reaches the new
			// primary. Not retried, a spooled job was refused for good and
			// its record lost.
			ReadOnlyTransaction:
			return true
		}
		class := code[:min(2, len(code))]
		return class == "08" || class == "53" // connection exception, insufficient resources
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	var opErr *net.OpError
	return errors.As(err, &connErr) || errors.As(err, &netErr) || errors.As(err, &opErr) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// SQLState is err's SQLSTATE, or "" when the server sent none.
func SQLState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// IsDataException reports a value the database refused to store or compare
// (SQLSTATE class 22).
func IsDataException(err error) bool {
	code := SQLState(err)
	return InClass(code, ClassData)
}
