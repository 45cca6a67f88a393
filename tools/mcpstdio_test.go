package tools

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// TestMain lets the test binary be a local MCP server over stdio, for the
// command transport's test.
func TestMain(m *testing.M) {
	if os.Getenv("VOXGATE_TEST_MCP_STDIO") == "1" {
		_ = notesServer().Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestMCPOverStdio(t *testing.T) {
	t.Setenv("VOXGATE_TEST_MCP_STDIO", "1") // inherited by the command only; not parallel
	src, err := NewMCPSource(context.Background(), MCPParams{Plans: testPlans, Servers: []config.MCPServer{{
		Name: "local", Command: []string{os.Args[0], "-test.run=^$"}, Tools: []string{"search"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	e := mustExecutor(t, pgtest.Pool(t), mustRegistry(t, RegistryParams{MCP: src}))
	if names := e.Registry().Names(); strings.Join(names, ",") != "local__search" {
		t.Fatalf("names: %v", names)
	}
	res, err := e.Execute(context.Background(), mcpCall("c1", "local__search", `{"q":"stdio"}`))
	if err != nil || res.Error != nil || !strings.Contains(string(res.Result), `"q":"stdio"`) || strings.Contains(string(res.Result), "u1") {
		t.Fatalf("%+v %v", res, err)
	}
}
