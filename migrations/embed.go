// Package migrations embeds voxgate's SQL migrations. Files are named
// NNNN_name.sql and applied in order by internal/database. Migrations follow
// expand/contract (DESIGN §13): each one must leave the schema usable by the
// previous release, so old and new replicas can run side by side.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
