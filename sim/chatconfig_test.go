package sim

import (
	"testing"

	"github.com/voxgate/voxgate/sim/openai"
)

// TestChatConfigYAML checks that an empty alias map or reasoning list in a
// config file means none, while leaving them out means the defaults, and
// that bad values are refused.
func TestChatConfigYAML(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]byte("chat: {model_aliases: {}, reasoning_models: [], prompt_cache: {ttl: 1h}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	none := openai.NewChatModels(nil, cfg.Chat)
	if none.Snapshot("gpt-4o") != "gpt-4o" || none.IsReasoning("o3") || cfg.Chat.PromptCache.TTL.Hours() != 1 {
		t.Errorf("empty lists: got snapshot %q, o3 reasoning %v, ttl %v; want gpt-4o, false, 1h",
			none.Snapshot("gpt-4o"), none.IsReasoning("o3"), cfg.Chat.PromptCache.TTL)
	}
	cfg, err = parseConfig([]byte("chat: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	defaults := openai.NewChatModels(nil, cfg.Chat)
	if defaults.Snapshot("gpt-4o") != "gpt-4o-2024-08-06" || !defaults.IsReasoning("o3-2025-04-16") {
		t.Errorf("defaults: got snapshot %q, o3 snapshot reasoning %v", defaults.Snapshot("gpt-4o"), defaults.IsReasoning("o3-2025-04-16"))
	}
	for _, bad := range []string{
		"chat: {model_aliases: {gpt-4o: ''}}",
		"chat: {reasoning_models: ['']}",
		"chat: {rate_limits: {requests_per_minute: -1}}",
		"chat: {prompt_cache: {max_entries: -1}}",
		"chat: {rate_limit: {}}",
	} {
		if _, err := parseConfig([]byte(bad)); err == nil {
			t.Errorf("%s: accepted, want an error", bad)
		}
	}
}
