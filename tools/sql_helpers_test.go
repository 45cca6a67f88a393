package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// sqlFixture is a small app schema as a SQL tool sees it: a table whose
// row-level-security policy keys on voxgate.user_id, a security_invoker
// view over it, and a table no tool declares. u1 has 150 entries, u2 has
// 3 (minutes 7919, 7907, 7901; two of kind secretKind), which u1 must
// never see.
const sqlFixture = `
CREATE SCHEMA sqltest;
CREATE TABLE sqltest.entries (
    id      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id text NOT NULL,
    kind    text NOT NULL,
    minutes integer NOT NULL,
    at      timestamptz NOT NULL
);
INSERT INTO sqltest.entries (user_id, kind, minutes, at)
SELECT 'u1', CASE WHEN i % 3 = 0 THEN 'run' ELSE 'walk' END, i, timestamptz '2026-11-01' + i * interval '1 hour'
FROM generate_series(1, 150) i;
INSERT INTO sqltest.entries (user_id, kind, minutes, at) VALUES
    ('u2', 'u2-secret-kind', 7919, '2026-11-02'), ('u2', 'u2-secret-kind', 7907, '2026-11-03'),
    ('u2', 'run', 7901, '2026-11-04');
ALTER TABLE sqltest.entries ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON sqltest.entries FOR SELECT TO voxgate_reader
    USING (user_id = current_setting('voxgate.user_id', true));
CREATE VIEW sqltest.my_entries WITH (security_invoker = true) AS
    SELECT id, kind, minutes, at FROM sqltest.entries;
CREATE TABLE sqltest.secrets (v text);
INSERT INTO sqltest.secrets VALUES ('u2-secret-kind');
GRANT USAGE ON SCHEMA sqltest TO voxgate_reader;
GRANT SELECT ON sqltest.entries, sqltest.my_entries TO voxgate_reader;
`

const secretKind = "u2-secret-kind"

func sqlPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(context.Background(), sqlFixture); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return pool
}

func openDef(name string) config.SQLTool {
	return config.SQLTool{Name: name, Description: "Answers questions over the user's entries.",
		Views: []string{"sqltest.my_entries"}, Open: true, Voice: true, Plans: []string{"pro"},
		StatementTimeout: 300 * time.Millisecond, MaxTokens: 16000}
}

// sqlExecutor has the open tool "ask" and the fixed tool "minutes_by_kind".
func sqlExecutor(t testing.TB, pool *pgxpool.Pool) *Executor {
	t.Helper()
	return sqlExecutorWith(t, pool, openDef("ask"))
}

// sqlExecutorWith is sqlExecutor with open as the open tool.
func sqlExecutorWith(t testing.TB, pool *pgxpool.Pool, open config.SQLTool) *Executor {
	t.Helper()
	fixed := config.SQLTool{Name: "minutes_by_kind", Description: "Minutes of one kind.",
		Views: []string{"sqltest.my_entries"}, Voice: true,
		Query: "SELECT kind, sum(minutes) AS minutes, count(*) AS n FROM sqltest.my_entries WHERE kind = $1 GROUP BY kind",
		Args:  []string{"kind"},
		Parameters: map[string]any{"type": "object", "required": []any{"kind"}, "additionalProperties": false,
			"properties": map[string]any{"kind": map[string]any{"type": "string", "maxLength": 40}}}}
	reg := mustRegistry(t, RegistryParams{DB: pool, Config: config.Tools{SQL: []config.SQLTool{open, fixed}}})
	return mustExecutor(t, pool, reg)
}

// proCall is a chat call by user on the pro plan.
func proCall(user, callID, name, args string) Call {
	return Call{SessionID: "s-" + user, SessionKind: KindChat, CallID: callID, Name: name,
		Arguments: []byte(args), Principal: auth.Principal{UserID: user, Plan: "pro"}}
}

func sqlArgs(sql string) string {
	b, _ := json.Marshal(map[string]string{"sql": sql})
	return string(b)
}

// answer decodes a successful SQL tool result.
func answer(t testing.TB, res Result) sqlAnswer {
	t.Helper()
	if res.Error != nil {
		t.Fatalf("tool error %s: %s", res.Error.Code, res.Error.Message)
	}
	var a sqlAnswer
	if err := json.Unmarshal(res.Result, &a); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	return a
}

// entriesState is what defence-in-depth checks after each hostile
// statement: nothing written anywhere.
type entriesState struct {
	count, sum int
	secrets    int
}

func readEntries(t testing.TB, pool *pgxpool.Pool) entriesState {
	t.Helper()
	var s entriesState
	err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM sqltest.entries),
		(SELECT coalesce(sum(minutes), 0) FROM sqltest.entries), (SELECT count(*) FROM sqltest.secrets)`).
		Scan(&s.count, &s.sum, &s.secrets)
	if err != nil {
		t.Fatalf("read entries: %v", err)
	}
	return s
}

func containsSecret(v any) bool {
	b, _ := json.Marshal(v)
	for _, m := range []string{secretKind, "7919", "7907", "7901"} {
		if strings.Contains(string(b), m) {
			return true
		}
	}
	return false
}
