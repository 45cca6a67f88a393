package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// runLedger serves `voxgate ledger prepare`: an existing unpartitioned
// ledger made ready, without blocking its writers, for migration 0092,
// which then attaches it as one partition in a transaction that holds
// writers for a catalog change only (docs/operations.md "Partitioning an
// existing ledger").
func runLedger(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "prepare" {
		fmt.Fprintln(stderr, "usage: voxgate ledger prepare")
		return errors.New("ledger: the subcommand is prepare")
	}
	fs := newFlags("ledger prepare", "Builds, without blocking writers, what migration 0092 needs to partition an existing usage_records of VOXGATE_DATABASE_URL by month: run it, then start the new release (or voxgate migrate) before the bound it prints.", stderr)
	cfg, err := loadConfig(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	pool, err := openSmallPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	began := time.Now()
	bound, ok, err := billing.PrepareLegacy(ctx, pool, time.Now())
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(stdout, "ledger prepare: usage_records is partitioned already; nothing to do")
		return nil
	}
	fmt.Fprintf(stdout, "ledger prepare: ready in %s; migrate before %s (records stamped from then on would be refused by the old table)\n",
		time.Since(began).Round(time.Millisecond), bound.Format(time.RFC3339))
	return nil
}
