package sim

import "github.com/voxgate/voxgate/sim/core"

// The validator for the official OpenAPI spec lives in sim/core, beside
// what every surface shares; these names keep it where tests find it.

// SpecEnv names the environment variable that points at the spec file.
const SpecEnv = core.SpecEnv

// ErrSpecNotFound: FindSpec found no spec file.
var ErrSpecNotFound = core.ErrSpecNotFound

// Spec validates JSON against the spec's schemas (core.Spec).
type Spec = core.Spec

// FindSpec locates the spec file (core.FindSpec).
func FindSpec() (string, error) { return core.FindSpec() }

// LoadSpec loads the spec at path (core.LoadSpec).
func LoadSpec(path string) (*Spec, error) { return core.LoadSpec(path) }
