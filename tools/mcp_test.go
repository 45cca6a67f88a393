package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

const mcpSecret = "an-identity-secret-of-32-bytes!!"

// notesServer is an in-process MCP server built with the same SDK. Its
// search tool answers with the query and the identity header it received.
func notesServer(without ...string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"additionalProperties":false}`)
	}
	s.AddTool(&mcp.Tool{Name: "search", Description: "Searches the user's notes.", InputSchema: obj(`"q":{"type":"string","maxLength":100}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Q string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			h := http.Header{} // none over stdio
			if req.Extra != nil && req.Extra.Header != nil {
				h = req.Extra.Header
			}
			return &mcp.CallToolResult{StructuredContent: map[string]any{"q": a.Q,
				"user": h.Get("X-Notes-User"), "signed": signedBy(h, "X-Notes-User")},
				Content: []mcp.Content{&mcp.TextContent{Text: "found"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "delete_all", Description: "Deletes every note.", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			panic("delete_all is not on the allowlist and must never be called")
		})
	s.AddTool(&mcp.Tool{Name: "for_user", Description: "Reads any user's notes.", InputSchema: obj(`"user_id":{"type":"string"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			panic("for_user names the user in its schema and must be refused")
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Takes its time.", InputSchema: obj(``)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "big", Description: "Answers at length.", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 5000)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "broken", Description: "Always fails.", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the index is rebuilding"}}}, nil
		})
	s.RemoveTools(without...)
	return s
}

// signedBy checks the signature over the identity header as a receiver
// would.
func signedBy(h http.Header, header string) bool {
	sig := h.Get(SignatureHeader)
	ts, _, ok := strings.Cut(strings.TrimPrefix(sig, "t="), ",")
	if !ok || h.Get(header) == "" {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	return err == nil && sig == Sign([]byte(mcpSecret), time.Unix(sec, 0), []byte(h.Get(header)))
}

// restartable serves a fresh notes server per "restart" and nothing while
// down, as a real server that goes away and comes back.
type restartable struct {
	down    atomic.Bool
	handler atomic.Pointer[http.Handler]
}

func (r *restartable) restart(without ...string) {
	s := notesServer(without...)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	r.handler.Store(&h)
	r.down.Store(false)
}

func (r *restartable) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.down.Load() {
		http.Error(w, "gone", http.StatusServiceUnavailable)
		return
	}
	(*r.handler.Load()).ServeHTTP(w, req)
}

func mcpFixture(t *testing.T, srv config.MCPServer) (*Executor, *MCPSource, *restartable) {
	t.Helper()
	rs := &restartable{}
	rs.restart()
	hs := httptest.NewServer(rs)
	t.Cleanup(hs.Close)
	if srv.Name == "" {
		srv.Name = "notes"
	}
	srv.URL = hs.URL
	if srv.Tools == nil {
		srv.Tools = []string{"search", "for_user", "slow", "broken", "big"}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	src, err := NewMCPSource(context.Background(), MCPParams{Servers: []config.MCPServer{srv}, Plans: testPlans,
		Getenv: func(string) string { return mcpSecret }, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("echo")}, MCP: src})
	return mustExecutor(t, pgtest.Pool(t), reg), src, rs
}

func mcpCall(callID, name, args string) Call {
	return Call{SessionID: "s", SessionKind: KindChat, CallID: callID, Name: name, Arguments: []byte(args),
		Principal: auth.Principal{UserID: "u1"}, Confirmed: true}
}

func TestMCPDiscoveryAndAllowlist(t *testing.T) {
	t.Parallel()
	e, _, _ := mcpFixture(t, config.MCPServer{Timeout: 500 * time.Millisecond})
	names := e.Registry().Names()
	want := []string{"echo", "notes__big", "notes__broken", "notes__search", "notes__slow"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("names: got %v, want %v (delete_all is not allowlisted, for_user names the user)", names, want)
	}
	search, _ := e.Registry().Lookup("notes__search")
	if search.Voice || search.Tier != TierStandard || search.Source() != "mcp" || search.Timeout != 500*time.Millisecond {
		t.Fatalf("defaults: voice %v, tier %s, source %s, timeout %s", search.Voice, search.Tier, search.Source(), search.Timeout)
	}
	if got := e.Registry().ForPlan("free", true); len(got) != 1 || got[0].Name != "echo" {
		t.Fatalf("voice list has MCP tools: %v", got)
	}
	_, err := e.Execute(context.Background(), mcpCall("c0", "notes__delete_all", `{}`))
	wantCode(t, err, apierr.ToolNotFound)
}

func TestMCPCall(t *testing.T) {
	t.Parallel()
	e, _, _ := mcpFixture(t, config.MCPServer{Timeout: 500 * time.Millisecond, IdentityHeader: "X-Notes-User",
		SecretEnv: "NOTES_SECRET", MaxResponseBytes: 1000})
	ctx := context.Background()

	unconfirmed := mcpCall("c1", "notes__search", `{"q":"tea"}`)
	unconfirmed.Confirmed = false
	_, err := e.Execute(ctx, unconfirmed)
	wantCode(t, err, apierr.ToolNotAllowed) // tier standard needs the user's yes

	res, err := e.Execute(ctx, mcpCall("c2", "notes__search", `{"q":"tea"}`))
	if err != nil || res.Error != nil {
		t.Fatalf("%+v %v", res, err)
	}
	if string(res.Result) != `{"q":"tea","signed":true,"user":"u1"}` {
		t.Fatalf("result %s: the user must arrive in the signed header only", res.Result)
	}
	_, err = e.Execute(ctx, mcpCall("c3", "notes__search", `{"q":"tea","user_id":"u2"}`))
	wantCode(t, err, apierr.ToolValidation)

	res, err = e.Execute(ctx, mcpCall("c4", "notes__broken", `{}`))
	if err != nil || res.Error == nil || res.Error.Code != "mcp_tool_error" || !strings.Contains(res.Output, "rebuilding") {
		t.Fatalf("tool error: %+v %v", res, err)
	}
	res, err = e.Execute(ctx, mcpCall("c6", "notes__big", `{}`))
	if err != nil || res.Error == nil || res.Error.Code != "mcp_too_large" {
		t.Fatalf("response cap: %+v %v", res, err)
	}
	if got := counterValue(e.metrics.mcpCalls.WithLabelValues("notes", "too_large")); got < 1 {
		t.Fatalf("voxgate_tools_mcp_calls_total{outcome=too_large} = %v", got)
	}
	start := time.Now()
	res, err = e.Execute(ctx, mcpCall("c5", "notes__slow", `{}`))
	if err != nil || res.Error == nil || res.Error.Code != ErrCodeTimeout || time.Since(start) > 3*time.Second {
		t.Fatalf("timeout: %+v %v after %s", res, err, time.Since(start))
	}
}

func TestMCPServerThatDisappearsAndReturns(t *testing.T) {
	t.Parallel()
	e, src, rs := mcpFixture(t, config.MCPServer{Timeout: 2 * time.Second})
	ctx := context.Background()
	if res, err := e.Execute(ctx, mcpCall("c1", "notes__search", `{"q":"a"}`)); err != nil || res.Error != nil {
		t.Fatalf("before: %+v %v", res, err)
	}
	rs.down.Store(true)
	res, err := e.Execute(ctx, mcpCall("c2", "notes__search", `{"q":"b"}`))
	if err != nil || res.Error == nil || res.Error.Code != "mcp_unreachable" {
		t.Fatalf("while down: %+v %v", res, err)
	}
	src.Refresh(ctx) // fails: the last list stays
	if _, ok := e.Registry().Lookup("notes__search"); !ok {
		t.Fatal("a failed refresh dropped the server's tools")
	}
	rs.restart() // a new process: the old session is unknown to it
	res, err = e.Execute(ctx, mcpCall("c3", "notes__search", `{"q":"c"}`))
	if err != nil || res.Error != nil || !strings.Contains(string(res.Result), `"q":"c"`) {
		t.Fatalf("after return: %+v %v", res, err)
	}
	src.Refresh(ctx)
	if len(e.Registry().Names()) != 5 {
		t.Fatalf("after refresh: %v", e.Registry().Names())
	}
	// The server drops a tool: the next refresh drops it too.
	rs.restart("broken")
	src.Refresh(ctx)
	if _, ok := e.Registry().Lookup("notes__broken"); ok || len(e.Registry().Names()) != 4 {
		t.Fatalf("after the server dropped broken: %v", e.Registry().Names())
	}
	// A restart between two calls: the session is unknown to the new
	// process, which ran nothing, so the call goes again on a new session.
	rs.restart()
	res, err = e.Execute(ctx, mcpCall("c4", "notes__search", `{"q":"d"}`))
	if err != nil || res.Error != nil || !strings.Contains(string(res.Result), `"q":"d"`) {
		t.Fatalf("after a restart: %+v %v", res, err)
	}
}

func TestMCPConfigIsCheckedAtStartup(t *testing.T) {
	t.Parallel()
	yes := true
	cases := []struct {
		srv  config.MCPServer
		want string
	}{
		{config.MCPServer{Name: "n", URL: "http://x"}, "tools.mcp[0] (n).tools: list the tools"},
		{config.MCPServer{Name: "a__b", URL: "http://x", Tools: []string{"t"}}, ".name:"},
		{config.MCPServer{Name: "n", Tools: []string{"t"}}, ".url: set exactly one"},
		{config.MCPServer{Name: "n", URL: "http://x", Command: []string{"srv"}, Tools: []string{"t"}}, ".url: set exactly one"},
		{config.MCPServer{Name: "n", URL: "ftp://x", Tools: []string{"t"}}, ".url: must be an absolute"},
		{config.MCPServer{Name: "n", URL: "http://x", Tools: []string{"t"}, Voice: &yes}, ".voice: true needs tier none"},
		{config.MCPServer{Name: "n", URL: "http://x", Tools: []string{"t"}, Plans: []string{"gold"}}, ".plans:"},
		{config.MCPServer{Name: "n", URL: "http://x", Tools: []string{"t"}, IdentityHeader: "X-User"}, ".secret_env:"},
		{config.MCPServer{Name: "n", Command: []string{"srv"}, Tools: []string{"t"}, IdentityHeader: "X-User", SecretEnv: "S"}, ".identity_header:"},
	}
	for _, c := range cases {
		_, err := NewMCPSource(context.Background(), MCPParams{Servers: []config.MCPServer{c.srv}, Plans: testPlans,
			Getenv: func(string) string { return "" }})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.srv, err, c.want)
		}
	}
}
