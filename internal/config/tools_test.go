package config_test

import (
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
)

func TestToolsSQLAndMCPDecode(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte(`
tools:
  sql:
    - name: ask_my_log
      description: Answers questions over the user's log.
      views: [logly.my_activities]
      open: true
      functions: [count, sum]
      notice: This isn't medical advice.
      voice: true
      plans: [pro]
      timeout: 4s
      statement_timeout: 2s
    - name: minutes
      description: Minutes by kind.
      views: [logly.my_activities]
      query: SELECT sum(minutes) FROM logly.my_activities WHERE kind = $1
      args: [kind]
      parameters: {type: object, properties: {kind: {type: string}}}
  mcp:
    - name: notes
      url: https://notes.example/mcp
      tools: [search]
      tier: none
      voice: true
      timeout: 3s
      max_response_bytes: 1000
      refresh: 1m
      identity_header: X-Notes-User
      secret_env: NOTES_SECRET
    - name: local
      command: [notes-server, --stdio]
      tools: [search]
`))
	if err != nil {
		t.Fatal(err)
	}
	sql, mcp := c.Tools.SQL, c.Tools.MCP
	if len(sql) != 2 || !sql[0].Open || sql[0].StatementTimeout != 2*time.Second || sql[0].Views[0] != "logly.my_activities" ||
		sql[0].Functions[1] != "sum" || sql[1].Args[0] != "kind" || sql[1].Parameters["type"] != "object" {
		t.Fatalf("sql: %+v", sql)
	}
	if len(mcp) != 2 || mcp[0].Voice == nil || !*mcp[0].Voice || mcp[0].Refresh != time.Minute || mcp[0].IdentityHeader != "X-Notes-User" ||
		mcp[1].Command[1] != "--stdio" || mcp[1].Voice != nil {
		t.Fatalf("mcp: %+v", mcp)
	}
	if _, err := config.Parse([]byte("tools:\n  sql:\n    - name: x\n      view: [a.b]\n")); err == nil {
		t.Fatal("an unknown key in tools.sql was accepted")
	}
}
