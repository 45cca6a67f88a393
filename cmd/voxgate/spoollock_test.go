package main

import (
	"context"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// A second replica pointed at the spool directory a running one holds
// stops at startup with a message naming the key; once the first has
// shut down, the directory is free again (docs/billing.md, "Durability").
func TestASecondReplicaOnTheSpoolDirectoryDoesNotStart(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	dir := t.TempDir()
	onDir := func(c *config.Config) { c.Database.SpoolDir = dir }
	first, _ := startMain(t, dbURL, onDir)

	env := map[string]string{"VOXGATE_DATABASE_URL": dbURL, "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 2
	onDir(cfg)
	second := &Main{Config: cfg, Logger: newLogger(&strings.Builder{})}
	err = second.Run(context.Background())
	_ = second.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "database.spool_dir") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a second replica on %s: got %v, want a startup error naming database.spool_dir and the directory", dir, err)
	}

	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	startMain(t, dbURL, onDir) // fails the test if the directory is still held
}
