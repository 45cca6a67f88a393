package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// TestTypeScriptClient runs the @voxgate/client package's Node tests
// (clients/typescript/test/live) against a gateway on the simulator with
// the demo's tools: a tool turn, a confirmation allowed, an idempotent
// replay, a refreshed 401 and a plan's refusal. scripts/client-ts.sh
// installs and builds the package first; under CI=true a missing build
// fails, elsewhere the test skips and says why.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "clients", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "dist", "esm", "index.js"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the built package is missing (CI needs them: run scripts/client-ts.sh): %v", err)
		}
		t.Skipf("node or the built package is missing: run scripts/client-ts.sh (%v)", err)
	}

	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t, demo.Migrations), func(c *config.Config) {
		c.Demo.Enabled = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
		// One request a minute: the second turn is refused with a wait.
		tiny := c.Quota.Plans["free"]
		tiny.RequestsPerMinute = 1
		c.Quota.Plans["tiny"] = tiny
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The tiny plan's two turns, in the last of the live tests, must share
	// one of quota's minutes (fixed windows on the database's clock): start
	// the run early in one, with room for all of it on a loaded machine.
	pgtest.FreshMinute(t, m.Pool, 40*time.Second)
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "test/live/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"VOXGATE_URL="+m.URL(),
		"VOXGATE_TOKEN="+mint(t, "ts-client-user", "", "pro"),
		"VOXGATE_TINY_TOKEN="+mint(t, "ts-client-tiny", "", "tiny"),
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test test/live: %v\n%s", err, out)
	}
	if s := string(out); !strings.Contains(s, "pass 5\n") || !strings.Contains(s, "skipped 0\n") {
		t.Fatalf("not every live test ran and passed:\n%s", s)
	}
}
