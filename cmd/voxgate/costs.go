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

// runCosts serves `voxgate costs export` (the CSV or JSONL of GET
// /v1/admin/costs.csv and .jsonl, straight from the database, for
// finance's scripts), `voxgate costs reconcile` and `voxgate costs
// reprice`.
func runCosts(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "reconcile" {
		return runReconcile(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "reprice" {
		return runReprice(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: voxgate costs export --from DATE --to DATE [--format csv|jsonl] [--out FILE] [--tz ZONE] [--user ID] [--kind KIND] [--mode MODE] [--model MODEL]")
		fmt.Fprintln(stderr, "       voxgate costs reconcile --from DATE --to DATE [--threshold MICROS]")
		fmt.Fprintln(stderr, "       voxgate costs reprice --from DATE --to DATE [--prices FILE] [--apply] [--by NAME] [--tz ZONE] [--user ID] [--kind KIND] [--mode MODE] [--model MODEL]")
		return errors.New("costs: the subcommands are export, reconcile and reprice")
	}
	fs := newFlags("costs export", "Writes the cost records created in [from, to) as RFC 4180 CSV or JSON Lines (as GET /v1/admin/costs.csv and .jsonl), streamed from VOXGATE_DATABASE_URL.", stderr)
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
	fin, closeRead, err := cliFinance(ctx, cfg, ledger)
	if err != nil {
		return err
	}
	defer closeRead()
	// Once an export was written whole, the whole UTC months it covered
	// are recorded as exported, with their record counts, on the primary:
	// the ledger's retention drops only those, and only while they still
	// hold what was exported.
	var m billing.Manifest
	manifest := func(got billing.Manifest) { m = got }
	recorded := func() error {
		months, err := ledger.RecordExport(ctx, f, m, *format)
		for _, mo := range months {
			fmt.Fprintf(stderr, "costs export: %s recorded as exported\n", mo.Format("2006-01"))
		}
		return err
	}
	if *out == "" {
		if err := fin.Export(ctx, stdout, f, *format, manifest); err != nil {
			return err
		}
		return recorded()
	}
	// Write beside the target and rename, so an interrupted export never
	// leaves a file that looks whole.
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".voxgate-costs-*."+*format)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fin.Export(ctx, tmp, f, *format, manifest); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	return recorded()
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

// providerUsage is the organization usage the ledger reconciles against:
// OpenAI's (or the simulator's, at the configured base URL), read with
// OPENAI_ADMIN_KEY, else the configured API key (which the simulator
// takes; OpenAI's Usage API answers 401 to it, which the reconciliation
// reports), and Anthropic's with ANTHROPIC_ADMIN_KEY. nil when none is
// set.
func providerUsage(cfg *config.Config, getenv func(string) string) billing.ProviderUsage {
	if getenv == nil {
		getenv = os.Getenv
	}
	var list billing.ProviderList
	key := getenv("OPENAI_ADMIN_KEY")
	if key == "" {
		key = cfg.Secrets.OpenAIAPIKey
	}
	if key != "" {
		list = append(list, billing.NewOpenAIUsage(cfg.Secrets.OpenAIBaseURL, key))
	}
	// Anthropic's analytics take an Admin API key only (docs/billing.md,
	// "Anthropic").
	if key := getenv("ANTHROPIC_ADMIN_KEY"); key != "" {
		list = append(list, billing.NewAnthropicUsage(getenv("ANTHROPIC_BASE_URL"), key))
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

// runReconcile serves `voxgate costs reconcile`: the provider's daily
// usage and costs against the ledger, one line per day and model. It fails
// (exit status 1) when a day is red, so a script can alert on it.
func runReconcile(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("costs reconcile", "Compares the provider's organization usage and costs with the ledger by UTC day and model, over [from, to).", stderr)
	from := fs.String("from", "", "first UTC day included (2026-11-01)")
	to := fs.String("to", "", "first UTC day excluded")
	threshold := fs.String("threshold", "", "cost difference in micro-USD a day may show and stay green (default 1000)")
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		return err
	}
	f, err := billing.ParseFilter(billing.FilterText{From: *from, To: *to}, time.Now())
	if err != nil {
		return err
	}
	limit, err := billing.ParseThreshold(*threshold)
	if err != nil {
		return err
	}
	p := providerUsage(cfg, getenv)
	if p == nil {
		return errors.New("costs reconcile: set OPENAI_ADMIN_KEY (an organization admin key) to read the provider's usage")
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
	fin, closeRead, err := cliFinance(ctx, cfg, ledger)
	if err != nil {
		return err
	}
	defer closeRead()
	rec, err := fin.Reconcile(ctx, f.From, f.To, p, limit)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "date\tmodel\tstate\tledger_tokens\tprovider_tokens\ttoken_diff\tledger_cost_micros\tprovider_cost_micros\tcost_diff_micros\tcoverage")
	for _, d := range rec.Days {
		for _, m := range d.Models {
			state := "green"
			if m.Red {
				state = "RED"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", d.Date, m.Model, state,
				m.LedgerTokens, m.ProviderTokens, m.TokenDiff, m.LedgerCostMicros, m.ProviderCostMicros, m.CostDiffMicros, m.Coverage)
		}
	}
	if rec.RedDays > 0 {
		return fmt.Errorf("costs reconcile: %d red day(s) of %d", rec.RedDays, len(rec.Days))
	}
	return nil
}
