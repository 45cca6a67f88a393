package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/voxgate/voxgate/internal/pgtest"
)

// `voxgate costs export` records the whole UTC months it wrote, which the
// ledger's retention then may drop; a filtered export records nothing.
func TestCostsExportRecordsWholeMonths(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	pool := pgtest.NewPool(t, url, 2)
	env := map[string]string{"VOXGATE_DATABASE_URL": url}
	export := func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append([]string{"costs", "export", "--out", filepath.Join(t.TempDir(), "costs.csv")}, args...)
		if err := run(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr); err != nil {
			t.Fatalf("costs export %v: %v (%s)", args, err, stderr.String())
		}
	}
	months := func() []string {
		t.Helper()
		rows, err := pool.Query(context.Background(), `SELECT to_char(month, 'YYYY-MM') FROM usage_exports ORDER BY month`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var m string
			if err := rows.Scan(&m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	export("--from", "2026-08-01", "--to", "2026-09-15", "--user", "alice")
	if got := months(); len(got) != 0 {
		t.Fatalf("a filtered export recorded %v, want nothing", got)
	}
	// August and September whole; October's first half is not a month.
	export("--from", "2026-08-01", "--to", "2026-10-15")
	if got := months(); len(got) != 2 || got[0] != "2026-08" || got[1] != "2026-09" {
		t.Fatalf("recorded %v, want 2026-08 and 2026-09", got)
	}
}
