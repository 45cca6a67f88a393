// Package migrations embeds voxgate's core SQL migrations: the gateway's own
// schema, applied on every start (internal/database.Core). Files are named
// NNNN_name.sql and applied in order; a version, once released, is never
// reused. Migrations follow expand/contract (DESIGN §13): each one must
// leave the schema usable by the previous release, so old and new replicas
// can run side by side. An optional domain keeps its tables in a set of its
// own (the demo's is tools/demo/migrations).
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
