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
