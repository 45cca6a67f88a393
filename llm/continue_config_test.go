package llm_test

import (
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
)

// A target's continue setting comes from the file to the router; a value
// other than prefill, or prefill on a provider kind that cannot continue
// (gemini), stops startup naming the key.
func TestContinueFromConfig(t *testing.T) {
	t.Parallel()
	file := func(target string) string {
		return `
providers:
  - {name: vllm, kind: openai, base_url: http://127.0.0.1:1/v1, key_env: VLLM_KEY}
  - {name: google, kind: gemini}
routes:
  - name: default
    targets:
      - {provider: vllm, model: llama}
      - ` + target + "\n"
	}
	cfg, err := config.Parse([]byte(file(`{provider: vllm, model: qwen, continue: prefill}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.RouteList()[0].Targets; got[0].Continue != "" || got[1].Continue != llm.ContinuePrefill {
		t.Errorf("continue: got %q, %q; want none, then prefill", got[0].Continue, got[1].Continue)
	}
	for _, c := range []struct{ target, want string }{
		{`{provider: vllm, model: qwen, continue: yes}`, `routes[0].targets[1].continue: must be "prefill" or empty`},
		{`{provider: google, model: gemini-3.8-flash, continue: prefill}`, `routes[0].targets[1].continue: provider "google" is of kind gemini`},
	} {
		if _, err := config.Parse([]byte(file(c.target))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.target, err, c.want)
		}
	}
	if _, err := llm.NewRouter(llm.RouterParams{Routes: []llm.Route{{Name: "r", Targets: []llm.Target{
		{Provider: "p", Model: "m", Continue: "always"}}}}}); err == nil {
		t.Error("NewRouter took continue: always")
	}
}
