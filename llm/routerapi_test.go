package llm_test

import (
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
)

// A route target's api: responses reaches its provider's adapter as the
// models to call over the Responses API, and the routed call goes there
// (the simulator counts it under /v1/responses, not chat); a bad value,
// a non-openai target, or one model asked over both APIs is a clear
// error naming the field.
func TestRouteTargetAPI(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	cfg, err := config.Parse([]byte(`
providers:
  - {name: openai, kind: openai}
routes:
  - name: default
    targets:
      - {provider: openai, model: gpt-4o, api: responses}
  - name: chat
    targets:
      - {provider: openai, model: gpt-4o-mini, api: chat_completions}
`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_BASE_URL": u.url, "OPENAI_API_KEY": "sk-test"}
	var spec llm.ProviderSpec
	factories := map[string]llm.Factory{config.KindOpenAI: func(s llm.ProviderSpec) (llm.Provider, error) {
		spec = s
		return openai.Factory(openai.Params{})(s)
	}}
	r, err := llm.NewRouterFromConfig(cfg, func(k string) string { return env[k] }, factories, llm.RouterParams{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(spec.ResponsesModels, ",") != "gpt-4o" {
		t.Errorf("responses models %v, want [gpt-4o]", spec.ResponsesModels)
	}
	h := &harness{router: r}
	for _, route := range []string{"default", "chat"} {
		if res := h.call(t, userRequest(route, "hi")); res.err != nil || res.text != routedAnswer {
			t.Fatalf("route %s: %q, %v", route, res.text, res.err)
		}
	}
	st := u.sim.Stats().Endpoints
	if st["/v1/responses"].Requests != 1 || st["/v1/chat/completions"].Requests != 1 {
		t.Errorf("responses %d, chat %d requests, want one each", st["/v1/responses"].Requests, st["/v1/chat/completions"].Requests)
	}

	for _, c := range []struct{ name, yaml, want string }{
		{"bad value", `{provider: openai, model: gpt-4o, api: assistants}`, `routes[0].targets[0].api: must be chat_completions, responses or empty, got "assistants"`},
		{"not openai", `{provider: claude, model: claude-haiku-4-5, api: responses}`, `routes[0].targets[0].api: provider "claude" is not of kind openai`},
		{"prefill", `{provider: openai, model: gpt-4o, api: responses, continue: prefill}`, `routes[0].targets[0].continue: a target with api: responses cannot continue`},
	} {
		_, err := config.Parse([]byte("providers:\n  - {name: openai, kind: openai}\n  - {name: claude, kind: anthropic}\nroutes:\n  - name: default\n    targets:\n      - " + c.yaml + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
	// Past the file's checks (a config built in code), the router's own.
	both := config.Default()
	both.Providers = []config.Provider{{Name: "openai", Kind: config.KindOpenAI}}
	both.Routes = []config.Route{
		{Name: "default", Targets: []config.RouteTarget{{Provider: "openai", Model: "gpt-4o", API: config.APIResponses}}},
		{Name: "other", Targets: []config.RouteTarget{{Provider: "openai", Model: "gpt-4o"}}},
	}
	if _, err := llm.NewRouterFromConfig(&both, func(k string) string { return env[k] }, factories, llm.RouterParams{}); err == nil ||
		!strings.Contains(err.Error(), `provider "openai" calls model "gpt-4o" over`) {
		t.Errorf("one model over both APIs: got %v, want a clear error", err)
	}
	bad := both
	bad.Routes = []config.Route{{Name: "default", Targets: []config.RouteTarget{{Provider: "openai", Model: "gpt-4o", API: "v2"}}}}
	if _, err := llm.NewRouterFromConfig(&bad, func(k string) string { return env[k] }, factories, llm.RouterParams{}); err == nil ||
		!strings.Contains(err.Error(), `api must be chat_completions, responses or empty, got "v2"`) {
		t.Errorf("a bad api in code: got %v, want a clear error", err)
	}
}
