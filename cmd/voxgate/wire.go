package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/tools/demo"
)

// migrationSets are the schemas this configuration runs on: the core set
// always, the demo's only when the demo is enabled, so a deployment without
// it has no demo tables.
func migrationSets(cfg *config.Config) []*database.Set {
	sets := []*database.Set{database.Core}
	if cfg.Demo.Enabled {
		sets = append(sets, demo.Migrations)
	}
	return sets
}

// migrate applies every set the configuration needs, core first.
func migrate(ctx context.Context, pool *pgxpool.Pool, cfg *config.Config, log *slog.Logger) ([]database.MigrateResult, error) {
	var out []database.MigrateResult
	for _, s := range migrationSets(cfg) {
		res, err := database.Migrate(ctx, pool, s, log)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// newTools builds the tool registry (the demo's built-in tools when the
// demo is enabled, plus configured webhooks, SQL tools and MCP servers) and
// its executor. An invalid
// definition stops startup.
func newTools(m *Main, getenv func(string) string) (*tools.Executor, error) {
	var builtins []*tools.Tool
	if m.Config.Demo.Enabled {
		var err error
		if builtins, err = demo.Tools(demo.Params{DB: m.Pool}); err != nil {
			return nil, err
		}
	}
	if len(m.Config.Tools.MCP) > 0 {
		var err error
		if m.MCP, err = tools.NewMCPSource(context.Background(), tools.MCPParams{Servers: m.Config.Tools.MCP,
			Plans: m.Config.Quota.PlanNames(), Getenv: getenv, Logger: m.Logger}); err != nil {
			return nil, err
		}
	}
	reg, err := tools.NewRegistry(tools.RegistryParams{
		Builtins: builtins, Config: m.Config.Tools, Plans: m.Config.Quota.PlanNames(), Getenv: getenv,
		DB: m.Pool, MCP: m.MCP,
	})
	if err != nil {
		return nil, err
	}
	if reg.HasSQLTools() {
		if err := tools.CheckSQLSandbox(context.Background(), m.Pool); err != nil {
			return nil, err
		}
	}
	return tools.NewExecutor(tools.ExecutorParams{
		DB: m.Pool, Registry: reg, Plans: m.Quota, Metrics: m.Registry, Logger: m.Logger, DryRun: m.Config.DryRun,
		ContextTTL: m.Config.Voice.ContextCacheTTL, Screen: safety.CheckText,
	})
}

func getenvOr(f func(string) string) func(string) string {
	if f != nil {
		return f
	}
	return os.Getenv
}
