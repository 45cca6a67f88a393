package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
)

func TestOpenSQLReadsOnlyTheUsersRows(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	e := sqlExecutor(t, pool)
	ctx := context.Background()
	q := sqlArgs("SELECT kind, count(*) AS n, sum(minutes) AS minutes FROM my_entries GROUP BY kind ORDER BY kind")

	res, err := e.Execute(ctx, proCall("u1", "c1", "ask", q))
	if err != nil {
		t.Fatal(err)
	}
	a := answer(t, res)
	// u1: 50 runs (every third of 1..150) and 100 walks.
	if got, _ := json.Marshal(a.Rows); string(got) != `[["run",50,3825],["walk",100,7500]]` {
		t.Fatalf("u1 rows: %s", got)
	}
	if containsSecret(res) || strings.Contains(res.Output, "SELECT") || strings.Contains(string(res.Result), "SELECT") {
		t.Fatalf("u1 saw u2's rows or the SQL: %+v", res)
	}
	res, err = e.Execute(ctx, proCall("u2", "c1", "ask", q))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(answer(t, res).Rows); string(got) != `[["run",1,7901],["u2-secret-kind",2,15826]]` {
		t.Fatalf("u2 rows: %s", got)
	}
	// A user with no rows sees none, not everyone's.
	res, err = e.Execute(ctx, proCall("u3", "c1", "ask", sqlArgs("SELECT count(*) FROM sqltest.my_entries")))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(answer(t, res).Rows); string(got) != `[[0]]` {
		t.Fatalf("u3 rows: %s", got)
	}
}

func TestSQLToolsCutAt100Rows(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	e := sqlExecutor(t, pool)
	res, err := e.Execute(context.Background(), proCall("u1", "c1", "ask", sqlArgs("SELECT id, kind FROM my_entries ORDER BY id")))
	if err != nil {
		t.Fatal(err)
	}
	a := answer(t, res)
	if len(a.Rows) != MaxSQLRows || a.RowCount != MaxSQLRows || !a.More || a.Note == "" {
		t.Fatalf("got %d rows, more %v, note %q", len(a.Rows), a.More, a.Note)
	}
	if !strings.Contains(res.Output, "first 100") {
		t.Fatalf("the model is not told rows were cut: %.300s", res.Output)
	}
	res, err = e.Execute(context.Background(), proCall("u1", "c2", "ask", sqlArgs("SELECT id FROM my_entries ORDER BY id LIMIT 100")))
	if err != nil {
		t.Fatal(err)
	}
	if a := answer(t, res); len(a.Rows) != 100 || a.More {
		t.Fatalf("exactly 100: got %d rows, more %v", len(a.Rows), a.More)
	}
}

func TestSQLTimeoutIsAToolError(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	e := sqlExecutor(t, pool)
	res, err := e.Execute(context.Background(), proCall("u1", "c1", "ask",
		sqlArgs("SELECT count(*) FROM generate_series(1, 1000000000) g")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Code != "query_timeout" || !strings.Contains(res.Output, "300ms") {
		t.Fatalf("got %+v, want a query_timeout the model can read", res)
	}
	if s := callRowState(t, pool, "s-u1", "c1"); s.Status != "failed" {
		t.Fatalf("recorded as %q", s.Status)
	}
}

func TestSQLToolsFollowTheExecutorsGates(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	e := sqlExecutor(t, pool)
	ctx := context.Background()
	free := proCall("u1", "c1", "ask", sqlArgs("SELECT 1"))
	free.Principal.Plan = "free"
	_, err := e.Execute(ctx, free)
	wantCode(t, err, apierr.ToolNotAllowed)

	voice := proCall("u1", "c2", "ask", sqlArgs("SELECT count(*) FROM my_entries"))
	voice.SessionKind = KindVoice
	first, err := e.Execute(ctx, voice)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Execute(ctx, voice)
	if err != nil || !again.Replayed || again.Output != first.Output {
		t.Fatalf("replay: %+v, %v", again, err)
	}
	_, err = e.Execute(ctx, proCall("u1", "c3", "ask", `{"sql":"SELECT 1","user_id":"u2"}`))
	wantCode(t, err, apierr.ToolValidation)
	_, err = e.Execute(ctx, proCall("u1", "c4", "ask", sqlArgs("SELECT '"+strings.Repeat("a", 1<<20)+"'")))
	wantCode(t, err, apierr.ToolValidation)
}

func TestFixedSQLTool(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	e := sqlExecutor(t, pool)
	ctx := context.Background()
	// The model's SQL is never the app's to see; a fixed tool's arguments
	// are ordinary.
	if ask, _ := e.Registry().Lookup("ask"); !ask.PrivateArguments {
		t.Error("an open SQL tool's arguments are not private")
	}
	if fixed, _ := e.Registry().Lookup("minutes_by_kind"); fixed.PrivateArguments {
		t.Error("a fixed SQL tool's arguments are private")
	}
	res, err := e.Execute(ctx, proCall("u1", "c1", "minutes_by_kind", `{"kind":"run"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(answer(t, res).Rows); string(got) != `[["run",3825,50]]` {
		t.Fatalf("u1 runs: %s", got)
	}
	// u2's secret kind exists, but not for u1.
	res, err = e.Execute(ctx, proCall("u1", "c2", "minutes_by_kind", `{"kind":"`+secretKind+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := answer(t, res); len(a.Rows) != 0 {
		t.Fatalf("u1 sees u2's rows: %v", a.Rows)
	}
	res, err = e.Execute(ctx, proCall("u2", "c1", "minutes_by_kind", `{"kind":"run"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(answer(t, res).Rows); string(got) != `[["run",7901,1]]` {
		t.Fatalf("u2 runs: %s", got)
	}
}

func TestFixedSQLToolsAreCheckedAtStartup(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	params := map[string]any{"type": "object", "properties": map[string]any{"kind": map[string]any{"type": "string"}}}
	def := func(q string, args ...string) config.SQLTool {
		return config.SQLTool{Name: "fixed", Description: "d", Views: []string{"sqltest.my_entries"},
			Query: q, Args: args, Parameters: params}
	}
	cases := []struct {
		name string
		def  config.SQLTool
		want string
	}{
		{"does not parse", def("SELEC kind FROM sqltest.my_entries"), "query: The query was refused: it does not parse"},
		{"two statements", def("SELECT 1; SELECT 2"), "exactly one statement"},
		{"not a select", def("DELETE FROM sqltest.my_entries"), "DELETE is not allowed"},
		{"outside the views", def("SELECT * FROM sqltest.entries"), "sqltest.entries is not one of the listed views"},
		{"bare view name", def("SELECT * FROM my_entries"), "name the view with its schema"},
		{"too few args", def("SELECT * FROM sqltest.my_entries WHERE kind = $1"), "args: the query has 1 placeholders and args names 0"},
		{"arg not a parameter", def("SELECT * FROM sqltest.my_entries WHERE kind = $1", "sort"), `args: "sort" is not a property`},
		{"bad view name", config.SQLTool{Name: "fixed", Description: "d", Views: []string{"entries"}, Query: "SELECT 1", Parameters: params}, "views:"},
		{"catalog view", config.SQLTool{Name: "fixed", Description: "d", Views: []string{"pg_catalog.pg_authid"}, Query: "SELECT 1", Parameters: params}, "system name"},
		{"user parameter", config.SQLTool{Name: "fixed", Description: "d", Views: []string{"sqltest.my_entries"},
			Query: "SELECT 1", Parameters: map[string]any{"type": "object", "properties": map[string]any{"user_id": map[string]any{"type": "string"}}}}, "never a tool parameter"},
		{"open with a query", config.SQLTool{Name: "fixed", Description: "d", Views: []string{"sqltest.my_entries"}, Open: true, Query: "SELECT 1"}, "open tool takes its statement"},
	}
	for _, c := range cases {
		_, err := NewRegistry(RegistryParams{DB: pool, Plans: testPlans, Config: config.Tools{SQL: []config.SQLTool{c.def}}})
		if err == nil || !strings.Contains(err.Error(), "tools.sql[0] (fixed).") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := NewRegistry(RegistryParams{Plans: testPlans, Config: config.Tools{SQL: []config.SQLTool{openDef("ask")}}}); err == nil {
		t.Error("SQL tools without a database were accepted")
	}
}

func TestCheckSQLSandbox(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	ctx := context.Background()
	if err := CheckSQLSandbox(ctx, pool); err != nil {
		t.Fatalf("a migrated database: %v", err)
	}
	// As if migration 0055 had run without a superuser: set_config is
	// still the reader's to call.
	if _, err := pool.Exec(ctx, "GRANT EXECUTE ON FUNCTION set_config(text, text, boolean) TO voxgate_reader"); err != nil {
		t.Fatal(err)
	}
	if err := CheckSQLSandbox(ctx, pool); err == nil || !strings.Contains(err.Error(), "may call set_config") {
		t.Fatalf("got %v, want a refusal naming set_config", err)
	}
	reg := mustRegistry(t, RegistryParams{DB: pool, Config: config.Tools{SQL: []config.SQLTool{openDef("ask")}}})
	if !reg.HasSQLTools() || mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("echo")}}).HasSQLTools() {
		t.Fatal("HasSQLTools")
	}
}
