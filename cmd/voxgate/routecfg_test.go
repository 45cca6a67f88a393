package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file whose plan or chat.route names a route that does not exist stops
// `voxgate serve` before anything starts, naming the key and the routes
// there are: a typo there would otherwise hide a route from a plan's users
// (GET /v1/models, every completion 404) with nothing saying why.
func TestServeRefusesUnknownRoutes(t *testing.T) {
	t.Parallel()
	routes := "routes:\n  - {name: default, targets: [{provider: openai, model: gpt-4o-mini}]}\n" +
		"  - {name: fast, targets: [{provider: openai, model: gpt-4o-mini}]}\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"a plan's route", routes + "quota:\n  plans:\n    pro:\n      routes: [fast, fsat]\n",
			`quota.plans.pro.routes: "fsat" is not among routes (have [default fast])`},
		{"chat.route", routes + "chat:\n  route: slow\n", `chat.route: "slow" is not among routes (have [default fast])`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "voxgate.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			// No database is reachable: the file must be refused first.
			env := map[string]string{"VOXGATE_DATABASE_URL": "postgres://127.0.0.1:1/none", "VOXGATE_JWT_SECRET": testSecret}
			var stderr bytes.Buffer
			err := run(context.Background(), []string{"serve", "--config", path}, func(k string) string { return env[k] }, &bytes.Buffer{}, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (%s), want a startup error with %q", err, stderr.String(), tc.want)
			}
		})
	}
}
