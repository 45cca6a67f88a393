package testgraph

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/audit"
)

// AuditRows are the audit rows of user's units, oldest first.
func AuditRows(t testing.TB, pool *pgxpool.Pool, user string) []audit.Row {
	t.Helper()
	ids := []string{}
	// Units in flight are rows of ai_audit_pending (docs/audit.md).
	rows, err := pool.Query(context.Background(), `SELECT turn_id FROM (
		SELECT turn_id, created_at FROM ai_audit_log WHERE user_id = $1
		UNION ALL SELECT turn_id, created_at FROM ai_audit_pending p WHERE user_id = $1
			AND NOT EXISTS (SELECT 1 FROM ai_audit_log a WHERE a.turn_id = p.turn_id)) u
		ORDER BY created_at, turn_id`, user)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	var out []audit.Row
	for _, id := range ids {
		r, err := audit.New(pool).Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// OneAuditRow is user's one audit row.
func OneAuditRow(t testing.TB, pool *pgxpool.Pool, user string) audit.Row {
	t.Helper()
	rs := AuditRows(t, pool, user)
	if len(rs) != 1 {
		t.Fatalf("%s has %d audit rows, want 1: %+v", user, len(rs), rs)
	}
	return rs[0]
}
