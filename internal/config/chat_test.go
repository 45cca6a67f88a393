package config

import (
	"testing"
	"time"
)

func TestChatSection(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
chat:
  model: gpt-4o-mini
  max_output_tokens: 800
  turn_timeout: 90s
  retention_days: 0
  reasoning_effort: low
  chunk_timeout: 5s
  first_chunk_timeouts: {gpt-6.2-sol: 2m}
`))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Chat
	if c.Model != "gpt-4o-mini" || c.MaxOutputTokens != 800 || c.TurnTimeout != 90*time.Second ||
		c.RetentionDays != 0 || c.ReasoningEffort != "low" || c.ChunkTimeout != 5*time.Second ||
		c.FirstChunkTimeouts["gpt-6.2-sol"] != 2*time.Minute {
		t.Fatalf("chat %+v", c)
	}
	if got := Default().Chat.RetentionDays; got != 90 {
		t.Errorf("retention without the section: got %d, want the default 90", got)
	}
	for _, bad := range []string{"chat:\n  modle: x\n", "chat:\n  turn_timeout: soon\n", "chat:\n  first_chunk_timeouts: {gpt-6.2-sol: soon}\n", "chat:\n  context_tool: x\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Degraded mode's answer is configured under chat.degraded; a key left
// out keeps its default.
func TestChatDegraded(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
chat:
  degraded:
    message: "We're resting. Back soon."
`))
	if err != nil {
		t.Fatal(err)
	}
	d, def := cfg.Chat.Degraded, DefaultDegraded()
	if d.Message != "We're resting. Back soon." || len(d.Suggestions) != len(def.Suggestions) || d.Suggestions[0] != def.Suggestions[0] {
		t.Fatalf("degraded %+v, want the message given and the default suggestions", d)
	}
	cfg, err = Parse([]byte("chat:\n  degraded:\n    suggestions: [{label: Menu, message: Show me the menu, category: FOOD}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Chat.Degraded; d.Message != def.Message || len(d.Suggestions) != 1 ||
		d.Suggestions[0] != (DegradedSuggestion{Label: "Menu", Message: "Show me the menu", Category: "FOOD"}) {
		t.Fatalf("degraded %+v, want the default message and the suggestion given", d)
	}
	if _, err := Parse([]byte("chat:\n  degraded:\n    mesage: x\n")); err == nil {
		t.Error("a misspelt chat.degraded key accepted")
	}
}
