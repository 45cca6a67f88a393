package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// /demo's script is web/src/demo.js bundled with @voxgate/client's source
// (clients/typescript/scripts/demo.mjs). The bundle is committed, since the
// gateway embeds it; this builds it afresh with the esbuild the package's
// lock pins (scripts/client-ts.sh installs it) and fails if the committed
// one differs, so the page runs the package as it is in the repository.
func TestDemoBundleIsFresh(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "clients", "typescript")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "esbuild"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or esbuild is missing (run scripts/client-ts.sh): %v", err)
		}
		t.Skipf("node or esbuild is missing: run scripts/client-ts.sh (%v)", err)
	}
	cmd := exec.Command(node, "scripts/demo.mjs", "--check")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "is fresh") {
		t.Fatalf("the check said: %s", out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
