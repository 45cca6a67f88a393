package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/config"
)

// Registry is the set of tools: those built at startup, which never
// change, and the MCP servers' tools, which change as the servers do.
type Registry struct {
	byName map[string]*Tool
	names  []string // sorted
	mcp    *MCPSource
}

// RegistryParams builds a Registry.
type RegistryParams struct {
	// Builtins are the Go tools (e.g. package tools/demo's).
	Builtins []*Tool
	// Config adds webhook tools and adjusts built-ins.
	Config config.Tools
	// Plans are the configured plan names; a tool naming any other plan is
	// refused, so a typo cannot silently hide a tool from everyone.
	Plans []string
	// Getenv reads webhook secrets (secret_env). Required when Config has
	// webhooks.
	Getenv func(string) string
	// HTTPClient sends webhook requests; nil builds one that never follows
	// redirects. A client given here has its redirect policy replaced.
	HTTPClient *http.Client
	// DB runs SQL tools (Config.SQL). Required when there are any.
	DB *pgxpool.Pool
	// MCP, when set, adds the MCP servers' tools (NewMCPSource).
	MCP *MCPSource
}

// NewRegistry checks every definition against the rules (rules.go) and
// compiles its schemas. Any invalid definition fails the whole registry
// with a message naming the tool, or for a definition from config the key
// to fix, so a bad config stops startup instead of failing calls later.
func NewRegistry(p RegistryParams) (*Registry, error) {
	var errs []error
	// fail records err about the definition at where: a config key
	// ("tools.webhooks[0] (book)") or a built-in (`tool "name"`).
	fail := func(where string, err error) {
		var re *ruleError
		if strings.HasPrefix(where, "tools.") && errors.As(err, &re) {
			errs = append(errs, fmt.Errorf("%s.%s: %s", where, re.field, re.problem))
			return
		}
		errs = append(errs, fmt.Errorf("%s: %w", where, err))
	}

	type def struct {
		t     *Tool
		where string
	}
	var all []def
	for _, t := range p.Builtins {
		if t == nil {
			errs = append(errs, errors.New("tools: a nil built-in tool"))
			continue
		}
		o, ok := p.Config.Builtins[t.Name]
		if ok && o.Disabled {
			continue
		}
		c := *t // never mutate the caller's definition
		c.source = "builtin"
		if ok {
			if err := checkOverride(o, c.Tier, p.Plans); err != nil {
				fail("tools.builtins."+t.Name, err)
				continue
			}
			applyOverride(&c, o)
		}
		all = append(all, def{&c, fmt.Sprintf("tool %q", t.Name)})
	}
	for _, name := range slices.Sorted(maps.Keys(p.Config.Builtins)) {
		if !slices.ContainsFunc(p.Builtins, func(t *Tool) bool { return t != nil && t.Name == name }) {
			fail("tools.builtins."+name, errors.New("names a tool that is not built in"))
		}
	}
	if len(p.Config.Webhooks) > 0 {
		if p.Getenv == nil {
			return nil, errors.New("tools: RegistryParams.Getenv is required for webhook tools")
		}
		client := webhookClient(p.HTTPClient)
		for i, w := range p.Config.Webhooks {
			where := fmt.Sprintf("tools.webhooks[%d]", i)
			if w.Name != "" {
				where += " (" + w.Name + ")"
			}
			t, err := newWebhookTool(w, p.Getenv, client)
			if err != nil {
				fail(where, err)
				continue
			}
			all = append(all, def{t, where})
		}
	}

	if len(p.Config.SQL) > 0 && p.DB == nil {
		return nil, errors.New("tools: RegistryParams.DB is required for SQL tools")
	}
	for i, d := range p.Config.SQL {
		where := fmt.Sprintf("tools.sql[%d]", i)
		if d.Name != "" {
			where += " (" + d.Name + ")"
		}
		t, err := NewSQLTool(p.DB, d)
		if err != nil {
			fail(where, err)
			continue
		}
		all = append(all, def{t, where})
	}

	r := &Registry{byName: map[string]*Tool{}, mcp: p.MCP}
	for _, d := range all {
		if _, dup := r.byName[d.t.Name]; dup {
			fail(d.where, broken("name", "%q is the name of another tool too", d.t.Name))
			continue
		}
		if srv := p.MCP.serverOf(d.t.Name); srv != "" {
			fail(d.where, broken("name", "%q is in the namespace of MCP server %q", d.t.Name, srv))
			continue
		}
		if err := prepare(d.t, p.Plans); err != nil {
			fail(d.where, err)
			continue
		}
		r.byName[d.t.Name] = d.t
		r.names = append(r.names, d.t.Name)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("tools: invalid tool definitions:\n%w", err)
	}
	sort.Strings(r.names)
	return r, nil
}

// checkOverride checks what tools.builtins sets on a built-in; zero values
// keep the built-in's own. A built-in without a tier has tier none.
func checkOverride(o config.BuiltinTool, tier Tier, plans []string) error {
	if o.Timeout != 0 {
		if err := checkTimeout(o.Timeout); err != nil {
			return err
		}
	}
	if o.MaxTokens != 0 {
		if err := checkMaxTokens(o.MaxTokens); err != nil {
			return err
		}
	}
	if o.Voice != nil && *o.Voice && tier != "" {
		if err := checkTier(tier, true); err != nil {
			return err
		}
	}
	return checkPlans(o.Plans, plans)
}

func applyOverride(t *Tool, o config.BuiltinTool) {
	if o.Voice != nil {
		t.Voice = *o.Voice
	}
	if o.Plans != nil {
		t.Plans = o.Plans
	}
	if o.Timeout != 0 {
		t.Timeout = o.Timeout
	}
	if o.MaxTokens != 0 {
		t.MaxTokens = o.MaxTokens
	}
}

// prepare fills defaults, enforces the rules and compiles the schemas.
func prepare(t *Tool, plans []string) error {
	if err := checkName(t.Name); err != nil {
		return err
	}
	if t.Description == "" {
		return broken("description", "is required: the model chooses tools by it")
	}
	if t.Run == nil {
		return errors.New("the tool has no body")
	}
	if t.Tier == "" {
		t.Tier = TierNone
	}
	if t.SafetyLevel == "" {
		t.SafetyLevel = SafetySafe
	}
	if t.Timeout == 0 {
		t.Timeout = DefaultTimeout
	}
	if t.MaxTokens == 0 {
		t.MaxTokens = DefaultMaxTokens
	}
	for _, err := range []error{checkTier(t.Tier, t.Voice), checkSafetyLevel(t.SafetyLevel), checkTimeout(t.Timeout),
		checkMaxTokens(t.MaxTokens), checkPlans(t.Plans, plans)} {
		if err != nil {
			return err
		}
	}
	if len(t.Parameters) == 0 {
		return broken("parameters", "a JSON Schema is required")
	}
	if err := checkParameters(t.Parameters); err != nil {
		return err
	}
	if err := checkMeasures(t.Measures, t.Parameters); err != nil {
		return err
	}
	s, err := compileSchema(t.Name, "parameters", t.Parameters)
	if err != nil {
		return err
	}
	t.params = s
	// Store the schema compactly: it is sent to providers on every turn.
	t.Parameters = compactJSON(t.Parameters)
	if len(t.OutputSchema) > 0 {
		if t.output, err = compileSchema(t.Name, "output", t.OutputSchema); err != nil {
			return err
		}
	}
	return nil
}

func compactJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// Lookup returns the tool called name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	if t, ok := r.byName[name]; ok {
		return t, true
	}
	return r.mcp.lookup(name)
}

// HasSQLTools reports whether any tool runs in the SQL sandbox, whose
// database side CheckSQLSandbox then checks at startup.
func (r *Registry) HasSQLTools() bool {
	for _, t := range r.byName {
		if t.sandboxed {
			return true
		}
	}
	return false
}

// Names lists every tool name, sorted.
func (r *Registry) Names() []string {
	m := r.mcp.names()
	if len(m) == 0 {
		return slices.Clone(r.names)
	}
	return slices.Sorted(slices.Values(append(slices.Clone(r.names), m...)))
}

// ForPlan lists the tools plan may use, sorted by name; voiceOnly keeps
// only the voice allowlist. Voice session start sends these to the
// provider; the LLM router takes their Specs.
func (r *Registry) ForPlan(plan string, voiceOnly bool) []*Tool {
	var out []*Tool
	for _, n := range r.Names() {
		t, _ := r.Lookup(n)
		if voiceOnly && !t.Voice {
			continue
		}
		if t.AllowsPlan(plan) {
			out = append(out, t)
		}
	}
	return out
}
