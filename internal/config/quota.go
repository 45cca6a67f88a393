package config

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Quota holds the plans of DESIGN §9. In Go a limit of 0 (Unlimited)
// means unlimited; the file says "unlimited" instead (see Plans).
type Quota struct {
	DefaultPlan string `yaml:"default_plan"`
	Plans       Plans  `yaml:"plans"`
	// GlobalRequestsPerMinute caps all users together; 0 is off. When hit,
	// requests get 503 UNAVAILABLE.
	GlobalRequestsPerMinute int64 `yaml:"global_requests_per_minute"`
}

// Unlimited is the value of a limit that does not limit.
const Unlimited int64 = 0

// MaxLimit is the largest limit: it keeps every sum of a limit and an
// estimate far from int64 overflow.
const MaxLimit int64 = 1e15

// Plan is one named set of limits; Unlimited (0) lifts one. Plans decodes
// it from the file, by the keys in planFields.
type Plan struct {
	RequestsPerMinute int64
	RequestsPerHour   int64
	RequestsPerDay    int64
	TokensPerDay      int64
	CostPerDayMicros  int64
	// CallsPerDay caps provider calls per UTC day (a tool loop makes several
	// per turn). DESIGN §9 sets no default, so the defaults leave it off.
	CallsPerDay          int64
	ConcurrentTurns      int64
	VoiceSecondsPerMonth int64
	MaxSessionSeconds    int64
	VoiceSessions        int64 // concurrent voice sessions; 1 in every built-in plan
	// Routes are the router's routes the plan may name as a model on
	// /v1/chat/completions (and that GET /v1/models lists). Like a limit's
	// 0, nil is "every configured route", which the file says as
	// `routes: all`; a list names them, and an empty one is refused.
	Routes []string
	// Messages are the plan's own words for its refusals, by limit name
	// (requests_per_day: "You've used today's 3 free calls…"): the
	// message of the 429 (or 503) that limit answers with, in place of
	// the code's default. A plan named like a built-in one keeps its
	// messages only if the file gives them.
	Messages map[string]string
}

// MaxRefusalMessage bounds a plan's refusal message, in bytes.
const MaxRefusalMessage = 500

// refusalLimits are the limits that refuse a request, the keys of a
// plan's messages (max_session_s shortens a session, never refuses one).
func refusalLimits() []string {
	var names []string
	for _, f := range planFields {
		if f.key != "max_session_s" {
			names = append(names, f.key)
		}
	}
	return names
}

// AllowsRoute says whether the plan may use the route named name.
func (p Plan) AllowsRoute(name string) bool {
	return p.Routes == nil || slices.Contains(p.Routes, name)
}

// DefaultQuota is DESIGN §9's table plus the dev-only bench plan.
func DefaultQuota() Quota {
	return Quota{
		DefaultPlan: "free",
		Plans: map[string]Plan{
			"free": {
				RequestsPerMinute: 3, RequestsPerHour: 20, RequestsPerDay: 100,
				TokensPerDay: 10_000, CostPerDayMicros: 500_000, ConcurrentTurns: 1,
				VoiceSecondsPerMonth: 1_800, MaxSessionSeconds: 900, VoiceSessions: 1,
			},
			"pro": {
				RequestsPerMinute: 30, RequestsPerHour: 300, RequestsPerDay: 500,
				TokensPerDay: 500_000, CostPerDayMicros: 5_000_000, ConcurrentTurns: 2,
				VoiceSecondsPerMonth: 18_000, MaxSessionSeconds: 1_800, VoiceSessions: 1,
			},
		},
	}
}

// NewPlan is where a plan the file names, and that is not built in, starts:
// the built-in free plan, so a limit left out is never more generous than
// the smallest plan's (docs/quota.md).
func NewPlan() Plan { return DefaultQuota().Plans["free"] }

// BenchPlan has no limits; `voxgate dev` adds it.
func BenchPlan() Plan { return Plan{MaxSessionSeconds: 3_600} }

// PlanNames lists the plans in a stable order.
func (q Quota) PlanNames() []string {
	names := make([]string, 0, len(q.Plans))
	for n := range q.Plans {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// planNameRE keeps plan names safe to show in errors, metrics and JSON keys.
var planNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Validate reports every problem with the quota settings at once; quota.New
// calls it so a service built outside Load is checked too.
func (q Quota) Validate() error { return errors.Join(q.validate()...) }

func (q Quota) validate() []error {
	var errs []error
	if len(q.Plans) == 0 {
		errs = append(errs, fmt.Errorf("config: quota.plans: at least one plan is needed"))
	}
	if _, ok := q.Plans[q.DefaultPlan]; !ok {
		errs = append(errs, fmt.Errorf("config: quota.default_plan: %q is not a configured plan (have %v)", q.DefaultPlan, q.PlanNames()))
	}
	if q.GlobalRequestsPerMinute < 0 {
		errs = append(errs, fmt.Errorf("config: quota.global_requests_per_minute: must not be negative"))
	}
	for _, name := range q.PlanNames() {
		p := q.Plans[name]
		if !planNameRE.MatchString(name) {
			errs = append(errs, fmt.Errorf("config: quota.plans: plan name %q must be 1-64 of a-z, 0-9, _ and -, starting with a letter or digit", name))
		}
		for _, f := range planFields {
			if v := *f.of(&p); v < 0 || v > MaxLimit {
				errs = append(errs, fmt.Errorf("config: quota.plans.%s.%s: must be between 1 and 1e15, or unlimited, got %d", name, f.key, v))
			}
		}
		if msg := checkMessages(p.Messages); msg != "" {
			errs = append(errs, fmt.Errorf("config: quota.plans.%s.messages: %s", name, msg))
		}
	}
	return errs
}

// Plans are the named plans. In the file each limit is a whole number or
// "unlimited", and a limit left out is never unlimited by omission: a plan
// named like a built-in one starts from it, field by field, and any other
// from NewPlan. A literal 0 is refused, since a reader could take it for
// "none" as well as for "unlimited".
type Plans map[string]Plan

// planField is one limit of a Plan and its key in the file.
type planField struct {
	key string
	of  func(*Plan) *int64
}

// planFields are every limit of a Plan, in the file's words.
var planFields = []planField{
	{"requests_per_minute", func(p *Plan) *int64 { return &p.RequestsPerMinute }},
	{"requests_per_hour", func(p *Plan) *int64 { return &p.RequestsPerHour }},
	{"requests_per_day", func(p *Plan) *int64 { return &p.RequestsPerDay }},
	{"tokens_per_day", func(p *Plan) *int64 { return &p.TokensPerDay }},
	{"cost_per_day_micros", func(p *Plan) *int64 { return &p.CostPerDayMicros }},
	{"calls_per_day", func(p *Plan) *int64 { return &p.CallsPerDay }},
	{"concurrent_turns", func(p *Plan) *int64 { return &p.ConcurrentTurns }},
	{"voice_seconds_per_month", func(p *Plan) *int64 { return &p.VoiceSecondsPerMonth }},
	{"max_session_s", func(p *Plan) *int64 { return &p.MaxSessionSeconds }},
	{"voice_sessions", func(p *Plan) *int64 { return &p.VoiceSessions }},
}

// UnmarshalYAML merges the file's plans into ps, which holds the built-in
// ones. Every problem is reported, each with its line, as a *yaml.TypeError
// so that the message names the key (see nameKeys).
func (ps *Plans) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return typeErrors(fmt.Sprintf("line %d: plans must be a mapping of plan names to limits", n.Line))
	}
	if *ps == nil {
		*ps = Plans{}
	}
	var errs []string
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, body := n.Content[i].Value, n.Content[i+1]
		if seen[name] {
			errs = append(errs, fmt.Sprintf("line %d: plan %s is already defined", n.Content[i].Line, name))
			continue
		}
		seen[name] = true
		p, ok := (*ps)[name]
		if !ok {
			p = NewPlan()
		}
		errs = append(errs, decodePlan(body, &p)...)
		(*ps)[name] = p
	}
	return typeErrors(errs...)
}

// decodePlan sets the limits body names on p.
func decodePlan(body *yaml.Node, p *Plan) []string {
	if body.Kind == yaml.ScalarNode && body.ShortTag() == "!!null" {
		return nil
	}
	if body.Kind != yaml.MappingNode {
		return []string{fmt.Sprintf("line %d: a plan must be a mapping of limits", body.Line)}
	}
	var errs []string
	seen := map[string]bool{}
	for i := 0; i+1 < len(body.Content); i += 2 {
		k, v := body.Content[i], body.Content[i+1]
		f := slices.IndexFunc(planFields, func(f planField) bool { return f.key == k.Value })
		switch {
		case seen[k.Value]:
			errs = append(errs, fmt.Sprintf("line %d: %s is already set", k.Line, k.Value))
			continue
		case k.Value == "routes":
			seen[k.Value] = true
			routes, msg := parseRoutes(v)
			if msg != "" {
				errs = append(errs, fmt.Sprintf("line %d: routes: %s", v.Line, msg))
				continue
			}
			p.Routes = routes
			continue
		case k.Value == "messages":
			seen[k.Value] = true
			msgs, msg := parseMessages(v)
			if msg != "" {
				errs = append(errs, fmt.Sprintf("line %d: messages: %s", v.Line, msg))
				continue
			}
			p.Messages = msgs
			continue
		case f < 0:
			errs = append(errs, fmt.Sprintf("line %d: field %s not found in type config.Plan", k.Line, k.Value))
			continue
		}
		seen[k.Value] = true
		lim, msg := parseLimit(v)
		if msg != "" {
			errs = append(errs, fmt.Sprintf("line %d: %s", v.Line, msg))
			continue
		}
		*planFields[f].of(p) = lim
	}
	return errs
}

// parseLimit reads a limit: a whole number, or "unlimited". A refusal is
// the message to show.
func parseLimit(v *yaml.Node) (int64, string) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value == "unlimited" {
		return Unlimited, ""
	}
	var n int64
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&n) != nil {
		return 0, fmt.Sprintf("want a whole number or unlimited, got %q", v.Value)
	}
	if n == 0 {
		return 0, `0 is not a limit: write unlimited for no limit`
	}
	return n, "" // the range is Validate's
}

// parseRoutes reads a plan's routes: "all", or a list of one or more
// route names. A refusal is the message to show.
func parseRoutes(v *yaml.Node) ([]string, string) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value == "all" {
		return nil, ""
	}
	var names []string
	if v.Kind != yaml.SequenceNode || v.Decode(&names) != nil {
		return nil, "want all, or a list of route names"
	}
	if len(names) == 0 {
		return nil, "an empty list is not a setting: name the routes, or write all"
	}
	for _, n := range names {
		if n == "" {
			return nil, "a route name must not be empty"
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(names))), ""
}

// fitEstimate refuses a plan whose daily tokens are fewer than what
// every chat turn and completion reserves up front (chat.estimate_tokens,
// docs/quota.md): admission is settled + in flight + estimate ≤ limit, so
// such a plan would answer every request 429 until midnight, which reads
// as a quota bug to its users rather than a setting. An estimate below 1
// is refused on its own (package chat).
func (q Quota) fitEstimate(estimate int64) []error {
	if estimate < 1 {
		return nil
	}
	var errs []error
	for _, name := range q.PlanNames() {
		if t := q.Plans[name].TokensPerDay; t != Unlimited && t < estimate {
			errs = append(errs, fmt.Errorf("config: quota.plans.%s.tokens_per_day: %d is less than chat.estimate_tokens (%d), "+
				"which every chat turn and completion reserves, so the plan could never be served one: "+
				"raise it to at least %d, or lower chat.estimate_tokens", name, t, estimate, estimate))
		}
	}
	return errs
}

// parseMessages reads a plan's refusal messages: a mapping of limit
// names to non-empty messages of at most MaxRefusalMessage bytes. A
// refusal is the message to show.
func parseMessages(v *yaml.Node) (map[string]string, string) {
	var msgs map[string]string
	if v.Kind != yaml.MappingNode || v.Decode(&msgs) != nil {
		return nil, "want a mapping of limit names to messages"
	}
	if msg := checkMessages(msgs); msg != "" {
		return nil, msg
	}
	return msgs, ""
}

// checkMessages is the rule for a plan's refusal messages, for the file
// and for a Quota built in Go (Validate): each names a limit that refuses
// and is 1–MaxRefusalMessage bytes.
func checkMessages(msgs map[string]string) string {
	limits := refusalLimits()
	for _, k := range slices.Sorted(maps.Keys(msgs)) {
		switch m := msgs[k]; {
		case !slices.Contains(limits, k):
			return fmt.Sprintf("%q is not a limit that refuses (have %v)", k, limits)
		case strings.TrimSpace(m) == "" || len(m) > MaxRefusalMessage:
			return fmt.Sprintf("%s: a message must be 1–%d bytes", k, MaxRefusalMessage)
		}
	}
	return ""
}

func typeErrors(msgs ...string) error {
	if len(msgs) == 0 {
		return nil
	}
	return &yaml.TypeError{Errors: msgs}
}
