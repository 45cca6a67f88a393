package main

import (
	"fmt"
	"maps"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/lifecycle"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/llm/openai"
)

// factories are the adapters the router may build, one per provider kind:
// a kind missing here leaves its providers not configured (traced
// not_configured), so adding an adapter is one line.
func factories(m *Main) map[string]llm.Factory {
	firstChunk := llm.DefaultFirstChunkTimeouts()
	maps.Copy(firstChunk, m.Config.Chat.FirstChunkTimeouts)
	return map[string]llm.Factory{
		config.KindOpenAI:    openai.Factory(openai.Params{Timeout: m.Config.Chat.ChunkTimeout, FirstChunk: firstChunk}),
		config.KindAnthropic: anthropic.Factory(anthropic.Params{Timeout: m.Config.Chat.ChunkTimeout, FirstChunk: firstChunk}),
		config.KindGemini:    gemini.Factory(gemini.Params{Timeout: m.Config.Chat.ChunkTimeout, FirstChunk: firstChunk}),
	}
}

// routerEnv is where provider keys and base URLs are read: the OpenAI
// variables as the config loaded them (Secrets), every other one from the
// environment.
func routerEnv(m *Main) func(string) string {
	getenv := getenvOr(m.Getenv)
	return func(k string) string {
		switch k {
		case "OPENAI_API_KEY":
			return m.Config.Secrets.OpenAIAPIKey
		case "OPENAI_BASE_URL":
			return m.Config.Secrets.OpenAIBaseURL
		}
		return getenv(k)
	}
}

// newRouter builds the text router from providers and routes. Every
// target's model needs a price: startup stops naming the one without.
func newRouter(m *Main) (*llm.Router, error) {
	cfg := m.Config
	for _, t := range routeTargets(cfg) {
		if err := m.Ledger.Prices().Require(t.model); err != nil {
			return nil, fmt.Errorf("%s: %w", t.key, err)
		}
	}
	r, err := llm.NewRouterFromConfig(cfg, routerEnv(m), factories(m), llm.RouterParams{Registerer: m.Registry, Now: m.RouterNow})
	if err != nil {
		// The adapters' own settings are chat's timeouts.
		return nil, fmt.Errorf("providers, chat.chunk_timeout, chat.first_chunk_timeouts: %w", err)
	}
	return r, nil
}

// chatConfigured says whether any target of chat.route has a provider that
// can be called; without one, chat is off.
func chatConfigured(r *llm.Router, cfg *config.Config) bool {
	route := map[string]bool{}
	for _, rt := range cfg.RouteList() {
		if rt.Name == cfg.Chat.Route {
			for _, t := range rt.Targets {
				route[t.Provider+"/"+t.Model] = true
			}
		}
	}
	for _, s := range r.Status() {
		if s.Configured && route[s.Provider+"/"+s.Model] {
			return true
		}
	}
	return false
}

// routeModels are the models chat.route may answer with, in order.
func routeModels(cfg *config.Config) []string {
	var out []string
	for _, rt := range cfg.RouteList() {
		if rt.Name == cfg.Chat.Route {
			for _, t := range rt.Targets {
				out = append(out, t.Model)
			}
		}
	}
	return out
}

// target is one route target's model and the config key naming it.
type target struct {
	key, model, provider string
}

// routeTargets lists every route target's model under its config key; the
// default route (no routes in the file) is chat.model's.
func routeTargets(cfg *config.Config) []target {
	var out []target
	for i, rt := range cfg.RouteList() {
		for j, t := range rt.Targets {
			key := fmt.Sprintf("routes[%d].targets[%d].model", i, j)
			if len(cfg.Routes) == 0 {
				key = "chat.model"
			}
			out = append(out, target{key: key, model: t.Model, provider: t.Provider})
		}
	}
	return out
}

// lifecycleModels are the models whose shutdown dates OpenAI's models list
// speaks for: route targets on an openai provider at the same base URL as
// OPENAI_BASE_URL (another server of that kind owes OpenAI's dates
// nothing), each once.
func lifecycleModels(m *Main, base string) []lifecycle.Configured {
	getenv := routerEnv(m)
	kinds := map[string]config.Provider{}
	for _, p := range m.Config.Providers {
		kinds[p.Name] = p
	}
	seen := map[string]bool{}
	var out []lifecycle.Configured
	for _, t := range routeTargets(m.Config) {
		p, ok := kinds[t.provider]
		if !ok || seen[t.model] {
			continue
		}
		switch b, key := p.Resolve(getenv); {
		case key == "":
			continue // not configured: the router skips it
		case p.Kind == config.KindAnthropic, p.Kind == config.KindGemini:
			seen[t.model] = true
			out = append(out, lifecycle.Configured{Key: t.key, Model: t.model, Unlisted: true})
		case b == "" || b == base:
			// OpenAI's own API: its models list speaks. Another server of
			// the openai kind has models of its own, with no dates known.
			seen[t.model] = true
			out = append(out, lifecycle.Configured{Key: t.key, Model: t.model})
		}
	}
	return out
}
