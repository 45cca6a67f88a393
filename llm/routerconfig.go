package llm

import (
	"fmt"
	"maps"
	"slices"

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
	// ResponsesModels are the models its route targets call over the
	// Responses API (config.RouteTarget.API); adapters of other kinds
	// have none.
	ResponsesModels []string
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
	apis, err := targetAPIs(cfg)
	if err != nil {
		return nil, err
	}
	params.Providers = map[string]Provider{}
	for _, p := range cfg.Providers {
		base, key := p.Resolve(getenv)
		f := factories[p.Kind]
		if key == "" || f == nil {
			continue
		}
		spec := ProviderSpec{Name: p.Name, Kind: p.Kind, BaseURL: base, APIKey: key, Store: p.Store}
		for _, m := range slices.Sorted(maps.Keys(apis[p.Name])) {
			if apis[p.Name][m] == config.APIResponses {
				spec.ResponsesModels = append(spec.ResponsesModels, m)
			}
		}
		prov, err := f(spec)
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

// targetAPIs is, per provider and model, the API its targets are called
// over (config.RouteTarget.API, "" for the default). The adapter picks
// the API by the request's model, so two targets of one provider and
// model that ask different APIs are refused: one would be served the
// other's.
func targetAPIs(cfg *config.Config) (map[string]map[string]string, error) {
	apis := map[string]map[string]string{}
	for _, r := range cfg.RouteList() {
		for i, t := range r.Targets {
			api := t.API
			switch api {
			case "", config.APIChatCompletions:
				api = config.APIChatCompletions
			case config.APIResponses:
			default:
				return nil, fmt.Errorf("llm: route %q: targets[%d]: api must be %s, %s or empty, got %q",
					r.Name, i, config.APIChatCompletions, config.APIResponses, t.API)
			}
			if apis[t.Provider] == nil {
				apis[t.Provider] = map[string]string{}
			}
			if was, ok := apis[t.Provider][t.Model]; ok && was != api {
				return nil, fmt.Errorf("llm: route %q: targets[%d]: provider %q calls model %q over %s elsewhere; one provider calls a model over one api",
					r.Name, i, t.Provider, t.Model, was)
			}
			apis[t.Provider][t.Model] = api
		}
	}
	return apis, nil
}
