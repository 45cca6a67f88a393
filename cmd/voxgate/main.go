// Command voxgate is the one binary: the gateway (serve), its zero-setup
// dev mode, migrations, token minting, the provider simulator and the cost
// export. main parses the subcommand; app.go wires the gateway's parts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/voxgate/voxgate/internal/config"
)

const usage = `voxgate — a self-hosted gateway between your app and AI providers.

Usage:
  voxgate <command> [flags]

Commands:
  serve     run the gateway (needs VOXGATE_DATABASE_URL and a JWT secret or JWKS URL)
  dev       run the gateway with zero setup: finds or starts PostgreSQL under ./.voxgate/,
            keeps a dev JWT secret there, and prints a ready token
  migrate   apply database migrations and exit
  token     print a signed JWT for testing (--sub U [--role admin] [--plan pro] [--ttl 1h])
  sim       run the OpenAI-compatible simulator (--addr, --config)
  costs     costs export --from DATE --to DATE [--out FILE]: the cost records as CSV
  ledger    ledger prepare: ready an existing ledger, online, for partitioning by month
            (docs/operations.md)
  bench     measure the gateway's and PostgreSQL's CPU, latency and throughput per
            completion against a neutral mock provider (docs/capacity.md)

Run 'voxgate <command> --help' for a command's flags.
Configuration: a YAML file (--config or VOXGATE_CONFIG) plus environment variables; see README.md.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "voxgate:", err)
		}
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(1)
	}
}

// run dispatches a subcommand. It returns when the command is done or ctx
// is cancelled (SIGINT/SIGTERM), after a clean shutdown.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], getenv, stdout, stderr)
	case "dev":
		return runDev(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], getenv, stdout, stderr)
	case "token":
		return runToken(args[1:], getenv, stdout, stderr)
	case "sim":
		return runSim(ctx, args[1:], getenv, stdout, stderr)
	case "costs":
		return runCosts(ctx, args[1:], getenv, stdout, stderr)
	case "ledger":
		return runLedger(ctx, args[1:], getenv, stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], getenv, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// newFlags returns a flag set that prints its usage to stderr and returns
// errors rather than exiting.
func newFlags(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: voxgate %s [flags]\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// configPath is --config, else VOXGATE_CONFIG.
func configPath(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	return getenv("VOXGATE_CONFIG")
}

// loadConfig adds --config to fs, parses args and loads the configuration.
func loadConfig(fs *flag.FlagSet, args []string, getenv func(string) string) (*config.Config, error) {
	cfgPath := fs.String("config", "", "path to voxgate.yaml (default $VOXGATE_CONFIG)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return config.Load(configPath(*cfgPath, getenv), getenv)
}
