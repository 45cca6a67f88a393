package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/voxgate/voxgate/internal/config"
)

// Registry is the immutable set of tools, built once at startup.
type Registry struct {
	byName map[string]*Tool
	names  []string // sorted
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
}

// NewRegistry checks every definition and compiles its schemas. Any invalid
// definition fails the whole registry with a message naming the tool, so a
// bad config stops startup instead of failing calls later.
func NewRegistry(p RegistryParams) (*Registry, error) {
	var errs []error
	fail := func(name string, err error) { errs = append(errs, fmt.Errorf("tool %q: %w", name, err)) }

	var all []*Tool
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
			applyOverride(&c, o)
		}
		all = append(all, &c)
	}
	for name := range p.Config.Builtins {
		if !slices.ContainsFunc(p.Builtins, func(t *Tool) bool { return t != nil && t.Name == name }) {
			fail(name, errors.New("tools.builtins names a tool that is not built in"))
		}
	}
	if len(p.Config.Webhooks) > 0 {
		if p.Getenv == nil {
			return nil, errors.New("tools: RegistryParams.Getenv is required for webhook tools")
		}
		client := webhookClient(p.HTTPClient)
		for _, w := range p.Config.Webhooks {
			t, err := newWebhookTool(w, p.Getenv, client)
			if err != nil {
				fail(w.Name, err)
				continue
			}
			all = append(all, t)
		}
	}

	r := &Registry{byName: map[string]*Tool{}}
	for _, t := range all {
		if _, dup := r.byName[t.Name]; dup {
			fail(t.Name, errors.New("the name is defined twice"))
			continue
		}
		if err := prepare(t, p.Plans); err != nil {
			fail(t.Name, err)
			continue
		}
		r.byName[t.Name] = t
		r.names = append(r.names, t.Name)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("tools: invalid tool definitions:\n%w", err)
	}
	sort.Strings(r.names)
	return r, nil
}

func applyOverride(t *Tool, o config.BuiltinTool) {
	if o.Voice != nil {
		t.Voice = *o.Voice
	}
	if o.Plans != nil {
		t.Plans = o.Plans
	}
	if o.Timeout > 0 {
		t.Timeout = o.Timeout
	}
	if o.MaxTokens > 0 {
		t.MaxTokens = o.MaxTokens
	}
}

// prepare fills defaults, enforces the DESIGN §8 rules and compiles the
// schemas.
func prepare(t *Tool, plans []string) error {
	if !config.ToolNameRE.MatchString(t.Name) {
		return errors.New("the name must be 1–64 letters, digits, _ or -")
	}
	if t.Description == "" {
		return errors.New("a description is required: the model chooses tools by it")
	}
	if t.Run == nil {
		return errors.New("the tool has no body")
	}
	if t.Tier == "" {
		t.Tier = TierNone
	}
	switch t.Tier {
	case TierNone, TierStandard, TierElevated:
	default:
		return fmt.Errorf("tier %q must be none, standard or elevated", t.Tier)
	}
	if t.Voice && t.Tier != TierNone {
		return fmt.Errorf("voice: true needs tier none, not %s: voice has no confirmation card", t.Tier)
	}
	if t.SafetyLevel == "" {
		t.SafetyLevel = SafetySafe
	}
	switch t.SafetyLevel {
	case SafetySafe, SafetyReview, SafetyRestricted:
	default:
		return fmt.Errorf("safety_level %q must be safe, review or restricted", t.SafetyLevel)
	}
	if t.Timeout == 0 {
		t.Timeout = config.DefaultToolTimeout
	}
	if t.Timeout < 0 || t.Timeout > config.MaxToolTimeout {
		return fmt.Errorf("timeout %s must be between 0 and %s", t.Timeout, config.MaxToolTimeout)
	}
	if t.MaxTokens == 0 {
		t.MaxTokens = config.DefaultToolMaxTokens
	}
	if t.MaxTokens < minMaxTokens || t.MaxTokens > config.MaxToolMaxTokens {
		return fmt.Errorf("max_tokens %d must be between %d and %d", t.MaxTokens, minMaxTokens, config.MaxToolMaxTokens)
	}
	for _, pl := range t.Plans {
		if len(plans) > 0 && !slices.Contains(plans, pl) {
			return fmt.Errorf("plans: %q is not a configured plan (have %v)", pl, plans)
		}
	}
	if len(t.Parameters) == 0 {
		return errors.New("parameters: a JSON Schema is required")
	}
	if err := checkParameters(t.Parameters); err != nil {
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
	t, ok := r.byName[name]
	return t, ok
}

// Names lists every tool name, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// ForPlan lists the tools plan may use, sorted by name; voiceOnly keeps
// only the voice allowlist. Voice session start sends these to the
// provider; the LLM router takes their Specs.
func (r *Registry) ForPlan(plan string, voiceOnly bool) []*Tool {
	var out []*Tool
	for _, n := range r.names {
		t := r.byName[n]
		if voiceOnly && !t.Voice {
			continue
		}
		if t.AllowsPlan(plan) {
			out = append(out, t)
		}
	}
	return out
}
