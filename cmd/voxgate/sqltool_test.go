package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// runsLastWeekSQL is what the scripted model writes for "how many runs did
// I log last week?".
const runsLastWeekSQL = "SELECT count(*) AS runs, sum(minutes) AS minutes FROM my_activities " +
	"WHERE kind = 'run' AND started_at >= now() - interval '7 days'"

// The demo's query_my_data end to end through POST /v1/chat: the simulated
// model writes SQL, the tool's numbers are the seeded rows', and the SQL
// appears nowhere in the stream; a free-plan user is refused the tool.
func TestChatQueryMyData(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Script: sim.Script{Rules: []sim.Rule{
		{Name: "ask", When: sim.When{Contains: []string{"runs"}, ToolResults: boolp(false)},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "query_my_data", Arguments: map[string]any{"sql": runsLastWeekSQL}}}}},
		{Name: "answer", When: sim.When{ToolResults: boolp(true)}, Reply: sim.Reply{Text: "Here is what your log says."}},
	}}})
	dbURL := pgtest.URL(t, demo.Migrations)
	m, _ := startMain(t, dbURL, func(c *config.Config) {
		c.Demo.Enabled = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	var runs, minutes int
	if err := m.Pool.QueryRow(context.Background(), `SELECT count(*), sum(minutes) FROM demo.activities
		WHERE user_id = 'demo' AND kind = 'run' AND started_at >= now() - interval '7 days'`).Scan(&runs, &minutes); err != nil {
		t.Fatal(err)
	}

	stream := func(plan string) string {
		resp := postChat(t, context.Background(), m.URL(), mint(t, "demo", "", plan), `{"message":"how many runs did I log last week?"}`)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", plan, resp.StatusCode, b)
		}
		return string(b)
	}
	pro := stream("pro")
	if !strings.Contains(pro, `"name":"query_my_data","state":"finished"`) || !strings.Contains(pro, "event: done") {
		t.Fatalf("pro stream:\n%s", pro)
	}
	var stored string
	if err := m.Pool.QueryRow(context.Background(), `SELECT response FROM tool_calls WHERE tool = 'query_my_data' AND user_id = 'demo'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`[[%d,%d]]`, runs, minutes); !strings.Contains(stored, want) {
		t.Fatalf("the tool answered %s, want rows %s", stored, want)
	}
	for _, s := range []string{"SELECT", "my_activities", "interval"} {
		if strings.Contains(pro, s) {
			t.Fatalf("the stream shows the SQL (%q):\n%s", s, pro)
		}
	}
	t.Run("history", func(t *testing.T) {
		// GET /v1/chat/sessions/{id}/messages lists each call's arguments,
		// but never a tool's marked PrivateArguments.
		sid, _, _ := strings.Cut(strings.TrimPrefix(pro[strings.Index(pro, `"session_id":"`):], `"session_id":"`), `"`)
		_, _, history := call(t, "GET", m.URL()+"/v1/chat/sessions/"+sid+"/messages", mint(t, "demo", "", "pro"), nil)
		for _, s := range []string{"SELECT", "my_activities", "interval"} {
			if strings.Contains(history, s) {
				t.Errorf("the conversation's history shows the SQL (%q):\n%s", s, history)
			}
		}
	})
	free := stream("free")
	if !strings.Contains(free, `"name":"query_my_data","state":"failed"`) {
		t.Fatalf("free stream:\n%s", free)
	}
}

func boolp(b bool) *bool { return &b }
