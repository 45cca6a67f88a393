package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// The voice and chat sections go to their services as written: a value
// the service cannot serve with stops startup with a message naming the
// key, a zero included (a key given is never silently the default).
func TestSectionValuesStopStartup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"an unknown usage class", func(c *config.Config) { c.Voice.UsageCeilings = map[string]int64{"vibes": 1} },
			`voice.usage_ceilings: no token class "vibes"`},
		{"a usage ceiling out of range", func(c *config.Config) {
			c.Voice.UsageCeilings = map[string]int64{"text_in": 100, "transcription.audio_ms": 0}
		}, "voice.usage_ceilings.transcription.audio_ms: 0 per second"},
		{"a context tool that is not registered", func(c *config.Config) { nope := "nope"; c.Voice.ContextTool = &nope },
			`voice.context_tool: no tool named "nope"`},
		{"a zero secret TTL", func(c *config.Config) { c.Voice.SecretTTL = 0 }, "voice.secret_ttl"},
		{"a zero turn estimate", func(c *config.Config) { c.Chat.EstimateTokens = 0 }, "chat.estimate_tokens"},
		{"a first-chunk timeout that is not positive", func(c *config.Config) {
			c.Chat.FirstChunkTimeouts = map[string]time.Duration{"gpt-6.2-sol": -time.Second}
		}, "chat.first_chunk_timeouts"},
		{"an empty degraded message", func(c *config.Config) { c.Chat.Degraded.Message = " " }, "chat.degraded.message"},
		{"a degraded suggestion without its message", func(c *config.Config) {
			c.Chat.Degraded.Suggestions = []config.DegradedSuggestion{{Label: "Retry"}}
		}, "chat.degraded.suggestions[0]"},
		{"a degraded category the response schema refuses", func(c *config.Config) {
			c.Chat.Degraded.Suggestions = []config.DegradedSuggestion{{Label: "Retry", Message: "Again", Category: strings.Repeat("x", 41)}}
		}, "chat.degraded: chat: final response breaks its schema at /suggestions/0/category"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret,
				"VOXGATE_ADDR": "127.0.0.1:0", "OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
			cfg, err := config.Load("", func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			cfg.Database.SpoolDir = t.TempDir()
			tc.mutate(cfg)
			m := &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{})}
			err = m.Run(context.Background())
			defer m.Close(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
