package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
)

// runCosts serves `voxgate costs export`: the same CSV as GET
// /v1/admin/costs.csv, straight from the database, for finance's scripts.
func runCosts(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: voxgate costs export --from DATE --to DATE [--out FILE] [--tz ZONE] [--user ID] [--kind KIND] [--mode MODE] [--model MODEL]")
		return errors.New("costs: the only subcommand is export")
	}
	fs := newFlags("costs export", "Writes the cost records created in [from, to) as RFC 4180 CSV (the columns of GET /v1/admin/costs.csv), streamed from VOXGATE_DATABASE_URL.", stderr)
	from := fs.String("from", "", "first day or instant included (2026-11-01 or RFC 3339)")
	to := fs.String("to", "", "first day or instant excluded")
	format := fs.String("format", billing.FormatCSV, "csv, or jsonl (one record per line, then a manifest line)")
	out := fs.String("out", "", "file to write (default: standard output); written whole or not at all")
	user := fs.String("user", "", "only this user's records")
	kind := fs.String("kind", "", "only records of this kind: voice, chat, completion or attempt")
	tz := fs.String("tz", "", "IANA time zone the dates are midnights of (default UTC)")
	mode := fs.String("mode", "", "only voice records of this mode: direct, sideband or relay")
	model := fs.String("model", "", "only this model's records")
	cfg, err := loadConfig(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if *format != billing.FormatCSV && *format != billing.FormatJSONL {
		return fmt.Errorf("costs export: --format must be csv or jsonl, not %q", *format)
	}
	f, err := billing.ParseFilter(billing.FilterText{From: *from, To: *to, TZ: *tz, UserID: *user, Kind: *kind, Mode: *mode, Model: *model}, time.Now())
	if err != nil {
		return err
	}
	pool, err := openSmallPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	prices, err := loadPrices(cfg)
	if err != nil {
		return err
	}
	ledger, err := billing.NewLedger(billing.LedgerParams{Pool: pool, Prices: prices, Logger: newLogger(stderr)})
	if err != nil {
		return err
	}
	if *out == "" {
		return ledger.Export(ctx, stdout, f, *format, nil)
	}
	// Write beside the target and rename, so an interrupted export never
	// leaves a file that looks whole.
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".voxgate-costs-*."+*format)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := ledger.Export(ctx, tmp, f, *format, nil); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), *out)
}

// loadPrices is the configured price table: the file's override when it
// has one, else the embedded table.
func loadPrices(cfg *config.Config) (*billing.Prices, error) {
	doc, err := cfg.Prices.YAML()
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return billing.DefaultPrices()
	}
	return billing.LoadPrices(doc)
}
