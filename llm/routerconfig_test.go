package llm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
)

// TestRouterFromConfig builds DESIGN §11's shape from a file: the openai
// provider from its SDK's variables, an anthropic one whose adapter
// another package supplies (here, none: not configured), a local server
// without its key.
func TestRouterFromConfig(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	cfg, err := config.Parse([]byte(`
providers:
  - {name: openai, kind: openai}
  - {name: claude, kind: anthropic}
  - {name: local, kind: openai, base_url: http://127.0.0.1:1/v1, key_env: LOCAL_KEY}
routes:
  - name: default
    targets:
      - {provider: claude, model: claude-haiku-4-5, max_tokens: 1024}
      - {provider: local, model: llama}
      - {provider: openai, model: gpt-4o, first_content: 2s}
`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_BASE_URL": u.url, "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant"}
	var specs []llm.ProviderSpec
	factories := map[string]llm.Factory{
		config.KindOpenAI: func(s llm.ProviderSpec) (llm.Provider, error) {
			specs = append(specs, s)
			return openai.Factory(openai.Params{})(s)
		},
	}
	r, err := llm.NewRouterFromConfig(cfg, func(k string) string { return env[k] }, factories, llm.RouterParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || !reflect.DeepEqual(specs[0], llm.ProviderSpec{Name: "openai", Kind: "openai", BaseURL: u.url, APIKey: "sk-test"}) {
		t.Errorf("factory saw %+v, want the openai provider alone (local has no key)", specs)
	}
	h := &harness{router: r}
	res := h.call(t, userRequest("default", "hi"))
	if res.err != nil {
		t.Fatal(res.err)
	}
	want := "claude/claude-haiku-4-5:not_configured local/llama:not_configured openai/gpt-4o:success"
	if got := strings.Join(res.trace().Strings(), " "); got != want {
		t.Errorf("trace: got %s, want %s", got, want)
	}
	status := r.Status()
	if len(status) != 3 || status[0].Configured || !status[2].Configured || status[2].State != llm.BreakerClosed {
		t.Errorf("status: got %+v", status)
	}

	refusing := map[string]llm.Factory{config.KindOpenAI: func(llm.ProviderSpec) (llm.Provider, error) {
		return nil, errors.New("no")
	}}
	if _, err := llm.NewRouterFromConfig(cfg, func(k string) string { return env[k] }, refusing, llm.RouterParams{}); err == nil ||
		!strings.Contains(err.Error(), `provider "openai"`) {
		t.Errorf("a refusing factory: got %v, want an error naming the provider", err)
	}
}
