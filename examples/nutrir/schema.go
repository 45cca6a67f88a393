// Package nutrir holds Nutrir's schema (schema.sql) for its tool server
// and tests; the rest of the example is configuration (voxgate.yaml) and
// the tool server (hooks/, toolserver/).
package nutrir

import _ "embed"

// Schema is schema.sql: the practice's tables and seed.
//
//go:embed schema.sql
var Schema string
