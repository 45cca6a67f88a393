package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A chat turn on a reasoning model whose first chunk comes later than the
// common chunk deadline (the old fixed 10 s, scaled down with
// chat.chunk_timeout so the test stays fast) is served under the
// reasoning models' default first-chunk deadline; a first_chunk_timeouts
// entry in the file replaces that default (and the route's one target
// then gives no content in time: the turn answers in degraded mode).
func TestReasoningModelTurnServed(t *testing.T) {
	t.Parallel()
	const think = 600 * time.Millisecond
	cases := []struct {
		name       string
		firstChunk map[string]time.Duration
		degraded   bool
	}{
		{"the reasoning default", nil, false},
		{"a shorter deadline in the file", map[string]time.Duration{"gpt-6.2-sol": 100 * time.Millisecond}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ts := simtest.NewServer(t, sim.Config{Latency: &sim.Latency{ModelTTFT: map[string]time.Duration{"gpt-6.2-sol": think}}})
			m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
				c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
				c.Chat.Model = "gpt-6.2-sol"
				c.Chat.ChunkTimeout = 150 * time.Millisecond
				c.Chat.FirstChunkTimeouts = tc.firstChunk
			})
			resp := postChat(t, context.Background(), m.URL(), mint(t, "alice", "", "pro"), `{"message":"plan my meals for the week","stream":false}`)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got struct{ Degraded bool }
			if err := json.Unmarshal(body, &got); resp.StatusCode != 200 || err != nil || got.Degraded != tc.degraded {
				t.Fatalf("got %d %s, want 200 with degraded %v", resp.StatusCode, body, tc.degraded)
			}
		})
	}
}

// gpt-6-luna takes tools over Chat Completions only at reasoning_effort
// none: a file that asks it for another effort stops startup, naming the
// key, rather than failing every turn.
func TestLunaEffortRefusedAtStartup(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 2
	cfg.Secrets.OpenAIAPIKey, cfg.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	cfg.Chat.Model, cfg.Chat.ReasoningEffort = "gpt-6-luna", "low"
	m := &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{})}
	err = m.Run(context.Background())
	_ = m.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), "chat.reasoning_effort") {
		t.Fatalf("got %v, want an error naming chat.reasoning_effort", err)
	}
}
