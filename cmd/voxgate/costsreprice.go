package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// runReprice serves `voxgate costs reprice`: the range's records priced
// again under a later table (the configured one, or --prices), the
// difference by model; with --apply, the new costs written in one
// transaction with an audit row (billing.Ledger.ApplyReprice).
func runReprice(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("costs reprice", "Prices the cost records created in [from, to) again with a price table and prints the difference by model; --apply writes the new costs.", stderr)
	from := fs.String("from", "", "first day or instant included (2026-11-01 or RFC 3339)")
	to := fs.String("to", "", "first day or instant excluded")
	pricesFile := fs.String("prices", "", "price table to reprice with, in prices.yaml's shape (default: the configured table)")
	apply := fs.Bool("apply", false, "write the new costs and versions, with an audit row (default: print only)")
	by := fs.String("by", "", "who applies the repricing, for the audit row (default: $USER)")
	user := fs.String("user", "", "only this user's records")
	kind := fs.String("kind", "", "only records of this kind")
	tz := fs.String("tz", "", "IANA time zone the dates are midnights of (default UTC)")
	mode := fs.String("mode", "", "only voice records of this mode")
	model := fs.String("model", "", "only this model's records")
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		return err
	}
	f, err := billing.ParseFilter(billing.FilterText{From: *from, To: *to, TZ: *tz, UserID: *user, Kind: *kind, Mode: *mode, Model: *model}, time.Now())
	if err != nil {
		return err
	}
	current, err := loadPrices(cfg)
	if err != nil {
		return err
	}
	next := current
	if *pricesFile != "" {
		doc, err := os.ReadFile(*pricesFile)
		if err != nil {
			return err
		}
		if next, err = billing.LoadPrices(doc); err != nil {
			return fmt.Errorf("costs reprice: %s: %w", *pricesFile, err)
		}
	}
	who := *by
	if who == "" && getenv != nil {
		who = getenv("USER")
	}
	if *apply && who == "" {
		return fmt.Errorf("costs reprice: --apply needs --by (or USER) for the audit row")
	}
	pool, err := openSmallPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	ledger, err := billing.NewLedger(billing.LedgerParams{Pool: pool, Prices: current, Logger: newLogger(stderr)})
	if err != nil {
		return err
	}
	var out billing.Repricing
	if *apply {
		out, err = ledger.ApplyReprice(ctx, f, next, who)
	} else {
		out, err = ledger.Reprice(ctx, f, next)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "model\trecords\told_cost_micros\tnew_cost_micros\tdifference_micros\told_unpriced\tnew_unpriced")
	for _, m := range append(out.Models, out.Total) {
		fmt.Fprintf(stdout, "%s\t%d\t%s\t%s\t%s\t%d\t%d\n", m.Model, m.Records, m.OldCost, m.NewCost, m.Difference, m.OldUnpriced, m.NewUnpriced)
	}
	if *apply {
		fmt.Fprintf(stderr, "applied: %d records now priced with version %s\n", out.Total.Records, out.NewVersion)
	} else {
		fmt.Fprintln(stderr, "nothing written: --apply writes the new costs")
	}
	return nil
}
