package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// tools.mcp through the real Main: the server's allowlisted tool is listed
// under its namespaced name, refreshed in the background, and the sessions
// end with Close.
func TestMCPServerConfigured(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	for _, name := range []string{"search", "delete_all"} {
		s.AddTool(&mcp.Tool{Name: name, Description: "A notes tool.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Tools.MCP = []config.MCPServer{{Name: "notes", URL: hs.URL, Tools: []string{"search"}, Refresh: time.Second}}
	})
	listed := listedTools(t, m.URL())
	if !slices.Contains(listed, "notes__search") || slices.Contains(listed, "notes__delete_all") {
		t.Fatalf("GET /v1/tools: %v", listed)
	}
	if m.MCP == nil {
		t.Fatal("Main has no MCP source")
	}
}
