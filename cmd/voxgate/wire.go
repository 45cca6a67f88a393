package main

import (
	"os"

	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/tools/demo"
)

// newTools builds the tool registry (built-in demo tools plus configured
// webhooks) and its executor. An invalid definition stops startup.
func newTools(m *Main, getenv func(string) string) (*tools.Executor, error) {
	builtins, err := demo.Tools(demo.Params{DB: m.Pool, DryRun: m.Config.DryRun})
	if err != nil {
		return nil, err
	}
	reg, err := tools.NewRegistry(tools.RegistryParams{
		Builtins: builtins, Config: m.Config.Tools, Plans: m.Config.Quota.PlanNames(), Getenv: getenv,
	})
	if err != nil {
		return nil, err
	}
	return tools.NewExecutor(tools.ExecutorParams{
		DB: m.Pool, Registry: reg, Plans: m.Quota, Metrics: m.Registry, Logger: m.Logger,
	})
}

func getenvOr(f func(string) string) func(string) string {
	if f != nil {
		return f
	}
	return os.Getenv
}
