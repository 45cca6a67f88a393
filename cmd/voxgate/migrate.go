package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/voxgate/voxgate/internal/database"
)

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", "Applies the embedded SQL migrations to VOXGATE_DATABASE_URL under an advisory lock, then exits.", stderr)
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		return err
	}
	if cfg.Database.URL == "" {
		return errors.New("VOXGATE_DATABASE_URL is not set")
	}
	pool, err := database.Open(ctx, cfg.Database.URL, 2, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := database.Migrate(ctx, pool, newLogger(stderr))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "applied %d migration(s); schema is at version %d (this binary: %d)\n", len(res.Applied), res.Schema, database.Latest())
	return nil
}
