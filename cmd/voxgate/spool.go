package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/voxgate/voxgate/internal/spool"
)

// plainName is a database name that is safe as a directory name as it is.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,63}$`)

// newSpool opens the durable path in database.spool_dir, in a directory of
// its own per database: jobs spooled against one database are never
// completed against another (a replica repointed at staging, tests sharing
// a directory). A directory that cannot be written stops startup.
func newSpool(ctx context.Context, m *Main) (*spool.Spool, error) {
	var name string
	if err := m.Pool.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		return nil, fmt.Errorf("spool: name the database: %w", err)
	}
	if !plainName.MatchString(name) {
		sum := sha256.Sum256([]byte(name))
		name = "db-" + hex.EncodeToString(sum[:8])
	}
	sp, err := spool.New(spool.Params{Dir: filepath.Join(m.Config.Database.SpoolDir, name),
		Registerer: m.Registry, Logger: m.Logger})
	if err != nil {
		return nil, fmt.Errorf("database.spool_dir: %w", err)
	}
	if n, _ := sp.Pending(); n > 0 {
		m.Logger.Warn("spool: jobs left from an earlier run; completing them", "jobs", n)
	}
	return sp, nil
}
