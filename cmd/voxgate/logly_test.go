package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// examples/logly loads as a configuration, its schema applies to a migrated
// database, and one scripted question goes through POST /v1/chat to its
// open SQL tool, which answers from the user's own rows.
func TestLoglyExample(t *testing.T) {
	t.Parallel()
	logly, err := config.Load("../../examples/logly/voxgate.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"This isn't medical advice", "only help with their log", "encouraging"} {
		if !strings.Contains(logly.Chat.Instructions, want) {
			t.Fatalf("chat instructions lack %q", want)
		}
	}
	if got := logly.Quota.Plans["pro"].RequestsPerHour; got != 20 {
		t.Fatalf("pro requests_per_hour: %d, want 20", got)
	}
	schema, err := os.ReadFile("../../examples/logly/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	const sql = "SELECT count(*) AS runs, sum(minutes) AS minutes FROM my_activities WHERE kind = 'run' AND done_on >= current_date - 7"
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Script: sim.Script{Rules: []sim.Rule{
		{Name: "ask", When: sim.When{Contains: []string{"runs"}, ToolResults: boolp(false), ToolsOffered: []string{"ask_my_log"}},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "ask_my_log", Arguments: map[string]any{"sql": sql}}}}},
		{Name: "answer", When: sim.When{ToolResults: boolp(true)}, Reply: sim.Reply{Text: "Nice work this week!"}},
	}}})
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Quota, c.Tools, c.Chat, c.Voice.Instructions = logly.Quota, logly.Tools, logly.Chat, logly.Voice.Instructions
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	ctx := context.Background()
	if _, err := m.Pool.Exec(ctx, string(schema)); err != nil {
		t.Fatalf("schema.sql: %v", err)
	}
	var runs, minutes int
	if err := m.Pool.QueryRow(ctx, `SELECT count(*), sum(minutes) FROM logly.activities
		WHERE user_id = 'dev-user' AND kind = 'run' AND done_on >= current_date - 7`).Scan(&runs, &minutes); err != nil || runs == 0 {
		t.Fatalf("seed: %d runs, %v", runs, err)
	}
	resp := postChat(t, ctx, m.URL(), mint(t, "dev-user", "", "pro"), `{"message":"How many runs did I do last week?"}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"name":"ask_my_log","state":"finished"`) ||
		!strings.Contains(string(b), "Nice work") || strings.Contains(string(b), "SELECT") {
		t.Fatalf("stream: %d\n%s", resp.StatusCode, b)
	}
	var stored string
	if err := m.Pool.QueryRow(ctx, `SELECT response FROM tool_calls WHERE tool = 'ask_my_log'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`[[%d,%d]]`, runs, minutes); !strings.Contains(stored, want) || !strings.Contains(stored, "medical advice") {
		t.Fatalf("the tool answered %s, want rows %s and the notice", stored, want)
	}
	// On the free plan the tool is not offered to the model, and a call is refused.
	free := postChat(t, ctx, m.URL(), mint(t, "dev-user", "", "free"), `{"message":"How many runs did I do last week?"}`)
	fb, _ := io.ReadAll(free.Body)
	free.Body.Close()
	if strings.Contains(string(fb), `"state":"finished"`) {
		t.Fatalf("free plan ran the tool:\n%s", fb)
	}
}
