package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/tools"
)

var demoTools = []string{"get_profile", "get_recipe", "log_meal", "query_my_data", "recommend_workouts", "search_recipes"}

// demoTables lists the demo's tables wherever they are, and whether schema
// demo exists.
func demoTables(t *testing.T, m *Main) ([]string, bool) {
	t.Helper()
	ctx := context.Background()
	var tables []string
	var schema bool
	err := m.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(table_schema || '.' || table_name ORDER BY table_schema, table_name), '{}'),
		to_regnamespace('demo') IS NOT NULL
		FROM information_schema.tables
		WHERE table_schema = 'demo' OR table_name IN ('recipes', 'profiles', 'meals', 'allergen_groups')`).Scan(&tables, &schema)
	if err != nil {
		t.Fatal(err)
	}
	return tables, schema
}

// listedTools is GET /v1/tools for a user on plan pro.
func listedTools(t *testing.T, base string) []string {
	t.Helper()
	tok, err := auth.Mint(auth.MintParams{Secret: []byte(testSecret), Subject: "demo-test", Plan: "pro", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	status, body := get(t, base+"/v1/tools", tok)
	var list struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &list); status != 200 || err != nil {
		t.Fatalf("GET /v1/tools: got %d %s", status, body)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	return names
}

// The demo is off unless the file or VOXGATE_DEMO turns it on; off, it has
// no tables and no tools, and on it has both and its tools answer.
func TestDemoSwitch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		file string
		env  string
		on   bool
	}{
		{name: "serve default", on: false},
		{name: "VOXGATE_DEMO=true", env: "true", on: true},
		{name: "demo.enabled in the file", file: "demo:\n  enabled: true\n", on: true},
		{name: "VOXGATE_DEMO=false beats the file", file: "demo:\n  enabled: true\n", env: "false", on: false},
		{name: "demo.enabled false", file: "demo:\n  enabled: false\n", on: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := ""
			if c.file != "" {
				path = filepath.Join(t.TempDir(), "voxgate.yaml")
				if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret,
				"VOXGATE_ADDR": "127.0.0.1:0", "VOXGATE_DEMO": c.env}
			cfg, err := config.Load(path, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			cfg.Database.SpoolDir = t.TempDir()
			m := &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{})}
			t.Cleanup(func() { _ = m.Close(context.Background()) })
			if err := m.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			tables, schema := demoTables(t, m)
			listed := listedTools(t, m.URL())
			if !c.on {
				if len(tables) != 0 || schema {
					t.Fatalf("demo off: got tables %v (schema demo: %v), want none", tables, schema)
				}
				for _, name := range demoTools {
					if slices.Contains(listed, name) {
						t.Fatalf("demo off: GET /v1/tools lists %s (%v)", name, listed)
					}
				}
				return
			}
			want := []string{"demo.activities", "demo.allergen_groups", "demo.meals", "demo.my_activities", "demo.my_meals",
				"demo.profiles", "demo.recipes", "demo.schema_migrations"}
			if !slices.Equal(tables, want) {
				t.Fatalf("demo on: got tables %v, want %v", tables, want)
			}
			for _, name := range demoTools {
				if !slices.Contains(listed, name) {
					t.Fatalf("demo on: GET /v1/tools lacks %s (%v)", name, listed)
				}
			}
			r, err := m.Tools.Execute(context.Background(), tools.Call{SessionID: "s1", SessionKind: tools.KindChat, CallID: "c1",
				Name: "search_recipes", Arguments: json.RawMessage(`{"query":"pasta"}`), Principal: auth.Principal{UserID: "demo"}})
			if err != nil || r.Error != nil || !strings.Contains(string(r.Result), `"title"`) {
				t.Fatalf("search_recipes: got %+v, %v, want recipes", r, err)
			}
		})
	}
}

// A value of VOXGATE_DEMO that is not a boolean stops startup, naming it.
func TestBadDemoSwitchStopsStartup(t *testing.T) {
	t.Parallel()
	env := map[string]string{"VOXGATE_DATABASE_URL": "postgres://127.0.0.1:1/none", "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_DEMO": "yes please"}
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), "VOXGATE_DEMO") {
		t.Fatalf("got %v (%s), want a startup error naming VOXGATE_DEMO", err, stderr.String())
	}
	path := filepath.Join(t.TempDir(), "voxgate.yaml")
	if err := os.WriteFile(path, []byte("demo:\n  enabled: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "demo.enabled") {
		t.Fatalf("got %v, want an error naming demo.enabled", err)
	}
}

// `voxgate migrate` applies the demo's set only when the demo is on.
func TestMigrateCommandFollowsTheSwitch(t *testing.T) {
	t.Parallel()
	for _, demo := range []string{"", "true"} {
		env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.EmptyURL(t), "VOXGATE_DEMO": demo}
		var out bytes.Buffer
		if err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("VOXGATE_DEMO=%q: migrate: %v", demo, err)
		}
		if got, want := strings.Contains(out.String(), "demo: applied 3 migration(s)"), demo == "true"; got != want {
			t.Fatalf("VOXGATE_DEMO=%q: output %q, want the demo set applied: %v", demo, out.String(), want)
		}
		if !strings.Contains(out.String(), "core: applied ") {
			t.Fatalf("VOXGATE_DEMO=%q: output %q lacks the core set", demo, out.String())
		}
	}
}

// /readyz compares the database's core version with this binary's (read
// once, not per probe): a schema one migration behind is not ready.
func TestReadyzWantsTheCoreSchema(t *testing.T) {
	t.Parallel()
	m, _ := startMain(t, pgtest.URL(t), nil)
	waitStatus(t, m.URL()+"/readyz", 200)
	if _, err := m.Pool.Exec(context.Background(), "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)"); err != nil {
		t.Fatal(err)
	}
	status, body := get(t, m.URL()+"/readyz", "")
	if status != 503 || !strings.Contains(body, "this binary needs") {
		t.Fatalf("/readyz on an older schema: got %d %s, want 503", status, body)
	}
}
