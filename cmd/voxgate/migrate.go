package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/database"
)

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", "Applies the embedded SQL migrations (the demo's too when VOXGATE_DEMO or demo.enabled turns it on) to VOXGATE_DATABASE_URL under an advisory lock, then exits.", stderr)
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		return err
	}
	pool, err := openSmallPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	results, err := migrate(ctx, pool, cfg, newLogger(stderr))
	for _, res := range results {
		fmt.Fprintf(stdout, "%s: applied %d migration(s); schema is at version %d (this binary: %d)\n", res.Set, len(res.Applied), res.Schema, res.Latest)
	}
	return err
}

// openSmallPool opens the two-connection pool of a one-shot command.
func openSmallPool(ctx context.Context, cfg *config.Config) (*pgxpool.Pool, error) {
	if cfg.Database.URL == "" {
		return nil, errors.New("VOXGATE_DATABASE_URL is not set")
	}
	return database.Open(ctx, cfg.Database.URL, 2, 0)
}
