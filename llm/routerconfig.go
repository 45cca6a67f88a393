package llm

import (
	"fmt"

	"github.com/voxgate/voxgate/internal/config"
)

// ProviderSpec is a configured provider as an adapter factory sees it:
// defaults applied, the key read from its variable.
type ProviderSpec struct {
	Name    string
	Kind    string
	BaseURL string // "" leaves the SDK's own default
	APIKey  string
	// Store is the provider's store setting (config.Provider.Store).
	Store bool
}

// Factory builds a provider's adapter. The router takes one per kind, so
// it depends on no adapter's code.
type Factory func(ProviderSpec) (Provider, error)

// NewRouterFromConfig builds the router of cfg's providers and routes.
// A provider without a key, or of a kind with no factory, is not
// configured: its targets are traced not_configured and skipped. A factory
// that refuses its provider stops the build, so startup fails with the
// provider's name. params gives everything but Providers and Routes.
func NewRouterFromConfig(cfg *config.Config, getenv func(string) string, factories map[string]Factory, params RouterParams) (*Router, error) {
	params.Providers = map[string]Provider{}
	for _, p := range cfg.Providers {
		base, key := p.Resolve(getenv)
		f := factories[p.Kind]
		if key == "" || f == nil {
			continue
		}
		prov, err := f(ProviderSpec{Name: p.Name, Kind: p.Kind, BaseURL: base, APIKey: key, Store: p.Store})
		if err != nil {
			return nil, fmt.Errorf("llm: provider %q: %w", p.Name, err)
		}
		params.Providers[p.Name] = prov
	}
	params.Routes = nil
	for _, r := range cfg.RouteList() {
		rt := Route{Name: r.Name, Budget: r.Budget}
		for _, t := range r.Targets {
			rt.Targets = append(rt.Targets, Target{Provider: t.Provider, Model: t.Model,
				FirstContent: t.FirstContent, Stall: t.Stall, Timeout: t.Timeout,
				MaxTokens: t.MaxTokens, ContextWindow: t.ContextWindow, Continue: t.Continue, PromptCacheTTL: t.PromptCacheTTL,
				ServiceTier: t.ServiceTier})
		}
		params.Routes = append(params.Routes, rt)
	}
	return NewRouter(params)
}
