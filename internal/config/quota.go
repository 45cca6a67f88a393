package config

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
)

// Quota holds the plans of DESIGN §9. A limit of 0 means unlimited.
type Quota struct {
	DefaultPlan string          `yaml:"default_plan"`
	Plans       map[string]Plan `yaml:"plans"`
	// GlobalRequestsPerMinute caps all users together; 0 is off. When hit,
	// requests get 503 UNAVAILABLE.
	GlobalRequestsPerMinute int64 `yaml:"global_requests_per_minute"`
}

// Plan is one named set of limits.
type Plan struct {
	RequestsPerMinute int64 `yaml:"requests_per_minute"`
	RequestsPerHour   int64 `yaml:"requests_per_hour"`
	RequestsPerDay    int64 `yaml:"requests_per_day"`
	TokensPerDay      int64 `yaml:"tokens_per_day"`
	CostPerDayMicros  int64 `yaml:"cost_per_day_micros"`
	// CallsPerDay caps provider calls per UTC day (a tool loop makes several
	// per turn). DESIGN §9 sets no default, so the defaults leave it off.
	CallsPerDay          int64 `yaml:"calls_per_day"`
	ConcurrentTurns      int64 `yaml:"concurrent_turns"`
	VoiceSecondsPerMonth int64 `yaml:"voice_seconds_per_month"`
	MaxSessionSeconds    int64 `yaml:"max_session_s"`
	VoiceSessions        int64 `yaml:"voice_sessions"` // concurrent voice sessions; default 1
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
		for field, v := range map[string]int64{
			"requests_per_minute": p.RequestsPerMinute, "requests_per_hour": p.RequestsPerHour,
			"requests_per_day": p.RequestsPerDay, "tokens_per_day": p.TokensPerDay,
			"cost_per_day_micros": p.CostPerDayMicros, "calls_per_day": p.CallsPerDay,
			"concurrent_turns":        p.ConcurrentTurns,
			"voice_seconds_per_month": p.VoiceSecondsPerMonth, "max_session_s": p.MaxSessionSeconds,
			"voice_sessions": p.VoiceSessions,
		} {
			// 1e15 keeps every sum of a limit and an estimate far from int64 overflow.
			if v < 0 || v > 1e15 {
				errs = append(errs, fmt.Errorf("config: quota.plans.%s.%s: must be between 0 (unlimited) and 1e15, got %d", name, field, v))
			}
		}
	}
	return errs
}
