package realtime

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/sim/core"
)

// These tests read the spec's schemas directly, for what the validator
// cannot check: which names the spec lists.

var (
	specSchemasOnce sync.Once
	specSchemasMap  map[string]any
	specSchemasErr  error
)

// specSchemas returns #/components/schemas of the official spec, parsed
// once per test binary; it skips like simtest.Spec when the file is absent.
func specSchemas(t *testing.T) map[string]any {
	t.Helper()
	specSchemasOnce.Do(func() {
		path, err := core.FindSpec()
		if err != nil {
			specSchemasErr = err
			return
		}
		specSchemasMap, specSchemasErr = core.ReadSpecSchemas(path)
	})
	if errors.Is(specSchemasErr, core.ErrSpecNotFound) && os.Getenv("CI") == "" {
		t.Skipf("OpenAI spec not available (set %s): %v", core.SpecEnv, specSchemasErr)
	}
	if specSchemasErr != nil {
		t.Fatalf("load OpenAI spec: %v", specSchemasErr)
	}
	return specSchemasMap
}
