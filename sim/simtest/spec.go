// package simtest holds test helpers shared by the simulator's tests and by
// tests elsewhere that run against it.
package simtest

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/sim"
)

// specOnce caches the parsed OpenAI spec for the whole test binary: the YAML
// is several MB and takes a second or more to parse. This is the one
// package-level variable in sim; it exists only in test binaries.
var specOnce = sync.OnceValues(func() (*sim.Spec, error) {
	path, err := sim.FindSpec()
	if err != nil {
		return nil, err
	}
	return sim.LoadSpec(path)
})

// Spec returns the shared OpenAI spec validator. When the spec file cannot be
// found the test is skipped, unless CI is set, where it fails: CI must always
// check fidelity.
func Spec(tb testing.TB) *sim.Spec {
	tb.Helper()
	s, err := specOnce()
	if errors.Is(err, sim.ErrSpecNotFound) && os.Getenv("CI") == "" {
		tb.Skipf("OpenAI spec not available (set %s): %v", sim.SpecEnv, err)
	}
	if err != nil {
		tb.Fatalf("load OpenAI spec: %v", err)
	}
	return s
}
