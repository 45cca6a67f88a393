package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/heartbeat"
)

// MCP servers are the third tool source (DESIGN §8). Each configured
// server's allowlisted tools join the registry as "<server>__<tool>", with
// the schema the server reports, checked like any tool's (no parameter may
// name the user); a tool whose schema fails is left out and logged. They
// are not voice and tier standard unless configured otherwise. The list is
// read at startup and again every refresh; a server that is down keeps its
// last tools listed, and calling one is a tool error the model can read
// until the server is back. The user's identity reaches a server only as
// configured: a header signed like a webhook body, never an argument.

const (
	// MCPSeparator joins a server's name and its tool's: "files__search".
	MCPSeparator         = "__"
	DefaultMCPRefresh    = 5 * time.Minute
	minMCPRefresh        = time.Second
	mcpConnectTimeout    = 10 * time.Second
	mcpErrorMessageBytes = 300
)

// MCPSource holds the configured servers and the tools they expose now.
// Calls, Lookup and Refresh are safe to run at once.
type MCPSource struct {
	servers []*mcpServer
	plans   []string
	log     *slog.Logger
	tools   atomic.Pointer[map[string]*Tool]
}

// MCPParams builds an MCPSource.
type MCPParams struct {
	Servers []config.MCPServer
	// Plans are the configured plan names, as for RegistryParams.
	Plans []string
	// Getenv reads identity secrets (secret_env).
	Getenv func(string) string
	// HTTPClient sends requests to HTTP servers; nil means a plain client.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// mcpServer is one configured server and its session, made on demand.
type mcpServer struct {
	cfg     config.MCPServer
	tier    Tier
	voice   bool
	maxResp int64
	client  *mcp.Client
	connect func(ctx context.Context) (*mcp.ClientSession, error)

	mu      sync.Mutex
	session *mcp.ClientSession
}

// NewMCPSource checks the configuration (a bad entry stops startup, naming
// the key) and reads every server's tools once. A server that cannot be
// reached now is not an error: its tools appear when a refresh reaches it.
func NewMCPSource(ctx context.Context, p MCPParams) (*MCPSource, error) {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	s := &MCPSource{plans: p.Plans, log: p.Logger}
	var errs []error
	seen := map[string]bool{}
	for i, c := range p.Servers {
		where := fmt.Sprintf("tools.mcp[%d]", i)
		if c.Name != "" {
			where += " (" + c.Name + ")"
		}
		srv, err := newMCPServer(c, p)
		if err == nil && seen[c.Name] {
			err = broken("name", "%q is the name of another server too", c.Name)
		}
		if err != nil {
			var re *ruleError
			if errors.As(err, &re) {
				err = fmt.Errorf("%s.%s: %s", where, re.field, re.problem)
			}
			errs = append(errs, err)
			continue
		}
		seen[c.Name] = true
		s.servers = append(s.servers, srv)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("tools: invalid MCP servers:\n%w", err)
	}
	empty := map[string]*Tool{}
	s.tools.Store(&empty)
	s.Refresh(ctx)
	return s, nil
}

func newMCPServer(c config.MCPServer, p MCPParams) (*mcpServer, error) {
	if err := checkName(c.Name); err != nil || strings.Contains(c.Name, MCPSeparator) {
		return nil, broken("name", "%q must be 1–64 letters, digits, _ or -, without %q", c.Name, MCPSeparator)
	}
	if len(c.Tools) == 0 {
		return nil, broken("tools", "list the tools this server may expose; none are by default")
	}
	for _, t := range c.Tools {
		if err := checkName(c.Name + MCPSeparator + t); err != nil {
			return nil, broken("tools", "%q makes the name %q, which is not a valid tool name", t, c.Name+MCPSeparator+t)
		}
	}
	srv := &mcpServer{cfg: c, tier: TierStandard, maxResp: c.MaxResponseBytes,
		client: mcp.NewClient(&mcp.Implementation{Name: "voxgate", Version: "1"}, nil)}
	if c.Tier != "" {
		srv.tier = Tier(c.Tier)
	}
	if c.Voice != nil {
		srv.voice = *c.Voice
	}
	if err := checkTier(srv.tier, srv.voice); err != nil {
		return nil, err
	}
	if err := checkPlans(c.Plans, p.Plans); err != nil {
		return nil, err
	}
	if c.Timeout != 0 {
		if err := checkTimeout(c.Timeout); err != nil {
			return nil, err
		}
	}
	if c.MaxTokens != 0 {
		if err := checkMaxTokens(c.MaxTokens); err != nil {
			return nil, err
		}
	}
	if c.MaxResponseBytes < 0 || c.MaxResponseBytes > MaxWebhookMaxResponse {
		return nil, broken("max_response_bytes", "must be between 0 (default %d) and %d", DefaultWebhookMaxResponse, MaxWebhookMaxResponse)
	}
	if srv.maxResp == 0 {
		srv.maxResp = DefaultWebhookMaxResponse
	}
	if c.Refresh != 0 && c.Refresh < minMCPRefresh {
		return nil, broken("refresh", "must be at least %s (default %s)", minMCPRefresh, DefaultMCPRefresh)
	}
	switch {
	case (c.URL == "") == (len(c.Command) == 0):
		return nil, broken("url", "set exactly one of url (streamable HTTP) and command (a local server over stdio)")
	case len(c.Command) > 0:
		if c.IdentityHeader != "" {
			return nil, broken("identity_header", "is for HTTP servers; a local command gets no identity")
		}
		srv.connect = func(ctx context.Context) (*mcp.ClientSession, error) {
			// The process outlives ctx: it is the session's, ended by Close.
			cmd := exec.Command(c.Command[0], c.Command[1:]...)
			return srv.client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		}
		return srv, nil
	}
	if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return nil, broken("url", "must be an absolute http(s) URL without credentials")
	}
	hc := webhookClient(p.HTTPClient) // no redirects, per-call deadlines
	if c.IdentityHeader != "" {
		if http.CanonicalHeaderKey(c.IdentityHeader) == SignatureHeader || !headerRE.MatchString(c.IdentityHeader) {
			return nil, broken("identity_header", "%q is not a usable header name", c.IdentityHeader)
		}
		if !envNameRE.MatchString(c.SecretEnv) {
			return nil, broken("secret_env", "must name the environment variable that holds the signing secret")
		}
		if p.Getenv == nil {
			return nil, errors.New("tools: MCPParams.Getenv is required for identity headers")
		}
		secret := p.Getenv(c.SecretEnv)
		if len(secret) < 16 {
			return nil, broken("secret_env", "%s must hold a signing secret of at least 16 bytes", c.SecretEnv)
		}
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		hc.Transport = &identityTransport{base: base, header: c.IdentityHeader, secret: []byte(secret), now: time.Now}
	} else if c.SecretEnv != "" {
		return nil, broken("secret_env", "is used only with identity_header")
	}
	hc.Transport = traceTransport{base: hc.Transport}
	srv.connect = func(ctx context.Context) (*mcp.ClientSession, error) {
		return srv.client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: hc,
			MaxRetries: -1, DisableStandaloneSSE: true, MaxEventSize: int(2*srv.maxResp) + 64<<10}, nil)
	}
	return srv, nil
}

// Refresh reads every server's tool list again and replaces the listed
// tools. A server that cannot be read keeps the tools it had.
func (s *MCPSource) Refresh(ctx context.Context) {
	old := *s.tools.Load()
	next := map[string]*Tool{}
	for _, srv := range s.servers {
		dctx, cancel := context.WithTimeout(ctx, mcpConnectTimeout)
		found, err := srv.discover(dctx, s.plans, s.log)
		cancel()
		if err != nil {
			s.log.WarnContext(ctx, "MCP server's tools could not be read; keeping its last list", "server", srv.cfg.Name, "err", err)
			for name, t := range old {
				if strings.HasPrefix(name, srv.cfg.Name+MCPSeparator) {
					next[name] = t
				}
			}
			continue
		}
		maps.Copy(next, found)
	}
	s.tools.Store(&next)
}

// Run refreshes at the shortest configured interval until ctx ends.
func (s *MCPSource) Run(ctx context.Context) {
	every := DefaultMCPRefresh
	for _, srv := range s.servers {
		if srv.cfg.Refresh != 0 {
			every = min(every, srv.cfg.Refresh)
		}
	}
	heartbeat.Every(ctx, every, s.Refresh)
}

// Close ends every session (and a local server's process).
func (s *MCPSource) Close() error {
	var errs []error
	for _, srv := range s.servers {
		srv.mu.Lock()
		if srv.session != nil {
			errs = append(errs, srv.session.Close())
			srv.session = nil
		}
		srv.mu.Unlock()
	}
	return errors.Join(errs...)
}

func (s *MCPSource) lookup(name string) (*Tool, bool) {
	if s == nil {
		return nil, false
	}
	t, ok := (*s.tools.Load())[name]
	return t, ok
}

func (s *MCPSource) names() []string {
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(*s.tools.Load()))
}

// serverOf names the server whose namespace name is in, or "".
func (s *MCPSource) serverOf(name string) string {
	if s == nil {
		return ""
	}
	for _, srv := range s.servers {
		if strings.HasPrefix(name, srv.cfg.Name+MCPSeparator) {
			return srv.cfg.Name
		}
	}
	return ""
}
