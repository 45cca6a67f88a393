package tools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerRE is an HTTP header name.
var headerRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// sessionFor returns the server's session, connecting when there is none.
func (srv *mcpServer) sessionFor(ctx context.Context) (*mcp.ClientSession, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.session != nil {
		return srv.session, nil
	}
	cctx, cancel := context.WithTimeout(ctx, mcpConnectTimeout)
	defer cancel()
	cs, err := srv.connect(cctx)
	if err != nil {
		return nil, err
	}
	srv.session = cs
	return cs, nil
}

// drop forgets a session that failed, so the next use connects afresh (a
// restarted server no longer knows the old session).
func (srv *mcpServer) drop(cs *mcp.ClientSession) {
	srv.mu.Lock()
	if srv.session == cs {
		srv.session = nil
	}
	srv.mu.Unlock()
	_ = cs.Close()
}

// discover lists the server's tools and builds those on its allowlist.
// A tool whose schema breaks a rule is left out and logged.
func (srv *mcpServer) discover(ctx context.Context, plans []string, log *slog.Logger) (map[string]*Tool, error) {
	listed, err := srv.list(ctx)
	if errors.Is(err, mcp.ErrSessionMissing) {
		listed, err = srv.list(ctx) // a restarted server: once more, on a new session
	}
	if err != nil {
		return nil, err
	}
	out := map[string]*Tool{}
	for _, mt := range listed {
		if !slices.Contains(srv.cfg.Tools, mt.Name) {
			continue
		}
		t, err := srv.tool(mt)
		if err == nil {
			err = prepare(t, plans)
		}
		if err != nil {
			log.WarnContext(ctx, "MCP tool refused", "server", srv.cfg.Name, "tool", mt.Name, "err", err)
			continue
		}
		out[t.Name] = t
	}
	return out, nil
}

// list reads the server's whole tool list; a failed session is dropped.
func (srv *mcpServer) list(ctx context.Context) ([]*mcp.Tool, error) {
	cs, err := srv.sessionFor(ctx)
	if err != nil {
		return nil, err
	}
	var out []*mcp.Tool
	for mt, err := range cs.Tools(ctx, nil) {
		if err != nil {
			srv.drop(cs)
			return nil, err
		}
		out = append(out, mt)
	}
	return out, nil
}

func (srv *mcpServer) tool(mt *mcp.Tool) (*Tool, error) {
	params, err := json.Marshal(mt.InputSchema)
	if err != nil || mt.InputSchema == nil {
		return nil, broken("parameters", "the server's input schema could not be read")
	}
	desc := mt.Description
	if desc == "" {
		desc = mt.Title
	}
	remote := mt.Name
	return &Tool{
		Name: srv.cfg.Name + MCPSeparator + mt.Name, Description: desc, Parameters: params,
		Voice: srv.voice, Tier: srv.tier, Plans: srv.cfg.Plans, Timeout: srv.cfg.Timeout, MaxTokens: srv.cfg.MaxTokens,
		Run: func(ctx context.Context, inv Invocation) (Outcome, error) {
			o, outcome, err := srv.call(ctx, remote, inv)
			inv.metrics.countMCP(srv.cfg.Name, outcome)
			return o, err
		},
		source: "mcp",
	}, nil
}

// call runs one tool on the server. Every failure is a ToolError the model
// can read, or ctx's error for the executor to report as a timeout.
func (srv *mcpServer) call(ctx context.Context, name string, inv Invocation) (Outcome, string, error) {
	unreachable := Failf("mcp_unreachable", "The %s service could not be reached.", srv.cfg.Name)
	var res *mcp.CallToolResult
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var cs *mcp.ClientSession
		if cs, err = srv.sessionFor(ctx); err != nil {
			break
		}
		res, err = cs.CallTool(withUser(ctx, inv.UserID), &mcp.CallToolParams{Name: name, Arguments: inv.Args})
		if err == nil {
			break
		}
		srv.drop(cs)
		// A restarted server no longer knows the session and ran nothing:
		// connect again and send the call once more. Any other failure may
		// have run the tool, so it is not repeated.
		if !errors.Is(err, mcp.ErrSessionMissing) {
			break
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, "timeout", ctx.Err()
		}
		return Outcome{}, "unreachable", unreachable
	}
	text := contentText(res.Content)
	if res.IsError {
		msg := text
		if len(msg) > mcpErrorMessageBytes {
			msg = msg[:mcpErrorMessageBytes]
		}
		return Outcome{}, "tool_error", Failf("mcp_tool_error", "The %s service's tool failed: %s", srv.cfg.Name, msg)
	}
	var data any = map[string]any{"text": text}
	if res.StructuredContent != nil {
		data = res.StructuredContent
	}
	b, err := json.Marshal(data)
	if err != nil {
		return Outcome{}, "tool_error", Failf("mcp_bad_answer", "The %s service's answer could not be read.", srv.cfg.Name)
	}
	if int64(len(b)) > srv.maxResp {
		return Outcome{}, "too_large", Failf("mcp_too_large", "The %s service's answer is larger than %d bytes.", srv.cfg.Name, srv.maxResp)
	}
	return Outcome{Data: json.RawMessage(b)}, "ok", nil
}

func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// The user's id travels in the request's context to identityTransport,
// which alone puts it on the wire.
type userKey struct{}

func withUser(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, userKey{}, id)
}

// identityTransport adds the configured identity header to every request
// made for a user, with X-Voxgate-Signature over the id as for a webhook
// body: t=<unix>,v1=<hex hmac-sha256(secret, t + "." + id)>.
type identityTransport struct {
	base   http.RoundTripper
	header string
	secret []byte
	now    func() time.Time
}

func (t *identityTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	id, _ := r.Context().Value(userKey{}).(string)
	if id == "" {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set(t.header, id)
	r.Header.Set(SignatureHeader, Sign(t.secret, t.now(), []byte(id)))
	return t.base.RoundTrip(r)
}
