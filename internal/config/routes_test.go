package config

import (
	"strings"
	"testing"
	"time"
)

func TestRoutesSection(t *testing.T) {
	t.Parallel()
	// DESIGN §11's example, with a route of its own for chat.
	cfg, err := Parse([]byte(`
providers:
  - {name: openai, kind: openai}
  - {name: claude, kind: anthropic}
  - {name: local, kind: openai, base_url: http://10.0.0.5:8000/v1, key_env: LOCAL_KEY}
routes:
  - name: default
    targets:
      - {provider: openai, model: gpt-4.1-mini, prompt_cache_ttl: 12h, service_tier: flex}
      - {provider: claude, model: claude-haiku-4-5, max_tokens: 1024}
  - name: long
    budget: 40s
    targets:
      - {provider: local, model: llama, first_content: 3s, stall: 1s, timeout: 5s, context_window: 8192}
chat:
  route: long
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Providers) != 3 || cfg.Providers[2].BaseURL != "http://10.0.0.5:8000/v1" || cfg.Providers[2].KeyEnv != "LOCAL_KEY" {
		t.Errorf("providers: got %+v", cfg.Providers)
	}
	routes := cfg.RouteList()
	want := RouteTarget{Provider: "local", Model: "llama", FirstContent: 3 * time.Second, Stall: time.Second,
		Timeout: 5 * time.Second, ContextWindow: 8192}
	if len(routes) != 2 || routes[0].Targets[1].MaxTokens != 1024 || routes[0].Targets[0].PromptCacheTTL != "12h" ||
		routes[0].Targets[0].ServiceTier != "flex" || routes[1].Budget != 40*time.Second ||
		routes[1].Targets[0] != want {
		t.Errorf("routes: got %+v", routes)
	}
	if cfg.Chat.Route != "long" {
		t.Errorf("chat.route: got %q", cfg.Chat.Route)
	}
}

func TestRoutesDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("chat:\n  model: gpt-4o-mini\n"))
	if err != nil {
		t.Fatal(err)
	}
	routes := cfg.RouteList()
	if len(routes) != 1 || routes[0].Name != "default" || cfg.Chat.Route != "default" ||
		routes[0].Targets[0] != (RouteTarget{Provider: "openai", Model: "gpt-4o-mini"}) {
		t.Errorf("default route: got %+v, chat.route %q", routes, cfg.Chat.Route)
	}
	env := map[string]string{
		"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-o",
		"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "sk-a",
		"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/g", "GEMINI_API_KEY": "g-k", "LOCAL_KEY": "l",
	}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		p         Provider
		base, key string
	}{
		{Provider{Name: "openai", Kind: KindOpenAI}, "http://127.0.0.1:9/v1", "sk-o"},
		{Provider{Name: "anthropic", Kind: KindAnthropic}, "http://127.0.0.1:9", "sk-a"},
		{Provider{Name: "gemini", Kind: KindGemini}, "http://127.0.0.1:9/g", "g-k"},
		{Provider{Name: "local", Kind: KindOpenAI, BaseURL: "http://10.0.0.5/v1", KeyEnv: "LOCAL_KEY"}, "http://10.0.0.5/v1", "l"},
		{Provider{Name: "nokey", Kind: KindOpenAI, KeyEnv: "UNSET"}, "http://127.0.0.1:9/v1", ""},
	} {
		if base, key := c.p.Resolve(getenv); base != c.base || key != c.key {
			t.Errorf("%s: got %q %q, want %q %q", c.p.Name, base, key, c.base, c.key)
		}
	}
	if got := len(Default().Providers); got != 3 {
		t.Errorf("default providers: got %d, want one of each kind", got)
	}
}

func TestRoutesRefused(t *testing.T) {
	t.Parallel()
	cases := []struct{ yaml, want string }{
		{"providers:\n  - {name: x, kind: mistral}\n", `providers[0].kind: must be openai, anthropic or gemini, got "mistral"`},
		{"providers:\n  - {name: openai, kind: openai}\n  - {name: openai, kind: gemini}\n", `providers[1].name: "openai" is defined twice`},
		{"providers:\n  - {name: o, kind: openai, base_url: ftp://x}\n", `providers[0].base_url: must start with http:// or https://`},
		{"providers:\n  - {name: o, kind: openai, key_env: sk-123}\n", `providers[0].key_env: must be an environment variable's name`},
		{"providers:\n  - {name: claude, kind: anthropic, store: true}\n", `providers[0].store: only a provider of kind gemini takes it ("claude" is anthropic)`},
		{"routes:\n  - {name: default, targets: [{provider: nowhere, model: m}]}\n", `routes[0].targets[0].provider: "nowhere" is not among providers`},
		{"routes:\n  - {name: default, targets: []}\n", `routes[0].targets: must list at least one target`},
		{"routes:\n  - {name: default, targets: [{provider: openai}]}\n", `routes[0].targets[0].model: must not be empty`},
		{"routes:\n  - {name: default, targets: [{provider: openai, model: m, first_content: -1s}]}\n", `first_content, stall and timeout must not be negative`},
		{"routes:\n  - {name: a, targets: [{provider: openai, model: m}]}\n", `chat.route: "default" is not among routes`},
		{"chat:\n  route: fast\n", `chat.route: "fast" is not among routes (have [default])`},
		// A plan may only name routes that exist: a typo would hide a
		// route from the plan's users, and nothing else would say so.
		{"quota:\n  plans:\n    pro:\n      routes: [default, defualt]\n",
			`quota.plans.pro.routes: "defualt" is not among routes (have [default])`},
		{"routes:\n  - {name: default, targets: [{provider: openai, model: m}]}\n  - {name: long, targets: [{provider: openai, model: m}]}\n" +
			"quota:\n  plans:\n    team:\n      routes: [short]\n",
			`quota.plans.team.routes: "short" is not among routes (have [default long])`},
		{"routes:\n  - {name: default, targets: [{provider: openai, model: m, weight: 2}]}\n", `weight`},
		{"routes:\n  - {name: default, targets: [{provider: openai, model: m, prompt_cache_ttl: 1h}]}\n",
			`routes[0].targets[0].prompt_cache_ttl: must be 30m, 12h or empty, got "1h"`},
		{"routes:\n  - {name: default, targets: [{provider: anthropic, model: m, prompt_cache_ttl: 12h}]}\n",
			`routes[0].targets[0].prompt_cache_ttl: provider "anthropic" is not of kind openai`},
		// scale is the API's, but Scale Tier bills reserved units, which
		// the ledger cannot price per token.
		{"routes:\n  - {name: default, targets: [{provider: openai, model: m, service_tier: scale}]}\n",
			`routes[0].targets[0].service_tier: must be one of auto, default, flex, priority, fast or empty, got "scale"`},
		{"routes:\n  - {name: default, targets: [{provider: openai, model: m, service_tier: Priority}]}\n",
			`routes[0].targets[0].service_tier: must be one of`},
		{"routes:\n  - {name: default, targets: [{provider: anthropic, model: m, service_tier: priority}]}\n",
			`routes[0].targets[0].service_tier: provider "anthropic" is not of kind openai`},
		{"providers:\n  - {name: g, kind: gemini}\nroutes:\n  - {name: default, targets: [{provider: g, model: m, service_tier: flex}]}\n",
			`routes[0].targets[0].service_tier: provider "g" is not of kind openai`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}
