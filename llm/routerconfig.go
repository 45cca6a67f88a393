package llm

import (
	"context"
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
}

// Factory builds a provider's adapter. The router takes one per kind, so
// it depends on no adapter's code.
type Factory func(ProviderSpec) (Provider, error)

// DefaultOpenAIBaseURL is the OpenAI API's base, for an openai provider
// neither the file nor OPENAI_BASE_URL points elsewhere.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIFactory builds openai adapters on params, each with its
// provider's base URL and key. The adapter's own first-chunk wait stays
// beneath the router's deadlines, so a params without FirstChunk gets
// DefaultFirstChunkTimeouts: a reasoning model's route must not be cut at
// the adapter's 10 s.
func OpenAIFactory(params OpenAIParams) Factory {
	return func(s ProviderSpec) (Provider, error) {
		p := params
		p.BaseURL, p.APIKey = s.BaseURL, s.APIKey
		if p.FirstChunk == nil {
			p.FirstChunk = DefaultFirstChunkTimeouts()
		}
		if p.BaseURL == "" {
			p.BaseURL = DefaultOpenAIBaseURL
		}
		return NewOpenAI(p)
	}
}

// GeminiFactory builds gemini adapters on params, each with its
// provider's name, base URL and key. An empty base URL leaves genai's own
// (GOOGLE_GEMINI_BASE_URL, else Google's endpoint).
func GeminiFactory(params GeminiParams) Factory {
	return func(s ProviderSpec) (Provider, error) {
		p := params
		p.Name, p.BaseURL, p.APIKey = s.Name, s.BaseURL, s.APIKey
		if p.FirstChunk == nil {
			p.FirstChunk = DefaultFirstChunkTimeouts()
		}
		// genai reads only its environment defaults from the context.
		return NewGemini(context.Background(), p)
	}
}

// DefaultAnthropicBaseURL is the Messages API's root.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// AnthropicFactory builds anthropic adapters on params, each with its
// provider's name, base URL (the API root: the SDK adds v1/messages) and
// key.
func AnthropicFactory(params AnthropicParams) Factory {
	return func(s ProviderSpec) (Provider, error) {
		p := params
		p.Name, p.BaseURL, p.APIKey = s.Name, s.BaseURL, s.APIKey
		if p.FirstChunk == nil {
			p.FirstChunk = DefaultFirstChunkTimeouts()
		}
		if p.BaseURL == "" {
			p.BaseURL = DefaultAnthropicBaseURL
		}
		return NewAnthropic(p)
	}
}

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
		prov, err := f(ProviderSpec{Name: p.Name, Kind: p.Kind, BaseURL: base, APIKey: key})
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
				MaxTokens: t.MaxTokens, ContextWindow: t.ContextWindow})
		}
		params.Routes = append(params.Routes, rt)
	}
	return NewRouter(params)
}
