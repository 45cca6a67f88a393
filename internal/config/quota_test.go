package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
)

// TestPlansInTheFile: a plan the file names starts from the built-in plan
// of that name, field by field, and a new plan from the free plan; a limit
// is unlimited only when the file says so.
func TestPlansInTheFile(t *testing.T) {
	t.Parallel()
	builtin := config.DefaultQuota().Plans
	free, pro := builtin["free"], builtin["pro"]
	with := func(p config.Plan, set func(*config.Plan)) config.Plan { set(&p); return p }
	tests := []struct {
		name, yaml string
		want       map[string]config.Plan
	}{
		{
			name: "one limit of a built-in plan",
			yaml: "quota:\n  plans:\n    free: {requests_per_minute: 10}\n",
			want: map[string]config.Plan{
				"free": with(free, func(p *config.Plan) { p.RequestsPerMinute = 10 }),
				"pro":  pro,
			},
		},
		{
			name: "unlimited said explicitly",
			yaml: "quota:\n  plans:\n    pro:\n      tokens_per_day: unlimited\n      calls_per_day: 50\n",
			want: map[string]config.Plan{
				"free": free,
				"pro":  with(pro, func(p *config.Plan) { p.TokensPerDay = config.Unlimited; p.CallsPerDay = 50 }),
			},
		},
		{
			name: "a new plan starts from free",
			yaml: "quota:\n  plans:\n    team:\n      concurrent_turns: 4\n      voice_sessions: 2\n",
			want: map[string]config.Plan{
				"free": free, "pro": pro,
				"team": with(free, func(p *config.Plan) { p.ConcurrentTurns = 4; p.VoiceSessions = 2 }),
			},
		},
		{
			name: "routes: a list, sorted and unique, or all",
			yaml: "routes:\n  - {name: default, targets: [{provider: openai, model: m}]}\n  - {name: chat, targets: [{provider: openai, model: m}]}\n" +
				"  - {name: solo, targets: [{provider: openai, model: m}]}\n" +
				"quota:\n  plans:\n    free:\n      routes: [solo, chat, solo]\n    pro:\n      routes: all\n",
			want: map[string]config.Plan{
				"free": with(free, func(p *config.Plan) { p.Routes = []string{"chat", "solo"} }), "pro": pro,
			},
		},
		{
			name: "refusal messages by limit",
			yaml: "quota:\n  plans:\n    free:\n      messages:\n        requests_per_day: \"That's today's free calls.\"\n        voice_sessions: One call at a time.\n",
			want: map[string]config.Plan{
				"free": with(free, func(p *config.Plan) {
					p.Messages = map[string]string{"requests_per_day": "That's today's free calls.", "voice_sessions": "One call at a time."}
				}), "pro": pro,
			},
		},
		{
			name: "an empty new plan is free's limits",
			yaml: "quota:\n  plans:\n    x: {}\n  default_plan: x\n",
			want: map[string]config.Plan{"free": free, "pro": pro, "x": free},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Quota.Plans) != len(tc.want) {
				t.Errorf("got plans %v, want %d", c.Quota.PlanNames(), len(tc.want))
			}
			for name, want := range tc.want {
				if got := c.Quota.Plans[name]; !reflect.DeepEqual(got, want) {
					t.Errorf("plan %s: got %+v, want %+v", name, got, want)
				}
			}
		})
	}
	if c := config.NewPlan(); c.Routes != nil {
		t.Errorf("NewPlan: routes %v, want all (nil)", c.Routes)
	}
	if c := config.NewPlan(); c.VoiceSessions != 1 || c.TokensPerDay == config.Unlimited {
		t.Errorf("NewPlan: got %+v, want one voice session and a token limit", c)
	}
}

// TestPlanLimitErrors: a limit is a whole number from 1 to 1e15 or
// unlimited; each refusal names the key and says what to write.
func TestPlanLimitErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"zero", "quota:\n  plans:\n    free:\n      tokens_per_day: 0\n",
			[]string{"quota.plans.free.tokens_per_day (line 4)", "write unlimited"}},
		{"a word", "quota:\n  plans:\n    pro:\n      voice_sessions: many\n",
			[]string{"quota.plans.pro.voice_sessions (line 4)", `want a whole number or unlimited, got "many"`}},
		{"a fraction", "quota:\n  plans:\n    pro:\n      cost_per_day_micros: 1.5\n",
			[]string{"quota.plans.pro.cost_per_day_micros", "whole number"}},
		{"unknown limit", "quota:\n  plans:\n    pro:\n      tokens_per_month: 5\n",
			[]string{"quota.plans.pro.tokens_per_month (line 4)", "not found"}},
		{"above 1e15", "quota:\n  plans:\n    free:\n      requests_per_day: 1000000000000001\n",
			[]string{"quota.plans.free.requests_per_day", "1e15, or unlimited"}},
		{"negative", "quota:\n  plans:\n    free:\n      requests_per_minute: -1\n",
			[]string{"quota.plans.free.requests_per_minute"}},
		{"set twice", "quota:\n  plans:\n    free:\n      concurrent_turns: 1\n      concurrent_turns: 2\n",
			[]string{"concurrent_turns", "already set"}},
		{"plan twice", "quota:\n  plans:\n    free: {}\n    free: {}\n", []string{"already defined"}},
		{"not a mapping", "quota:\n  plans:\n    free: 3\n", []string{"quota.plans.free", "mapping"}},
		{"every error at once", "quota:\n  plans:\n    free:\n      tokens_per_day: 0\n      cost_per_day_micros: 0\n",
			[]string{"quota.plans.free.tokens_per_day", "quota.plans.free.cost_per_day_micros"}},
		{"no routes", "quota:\n  plans:\n    free:\n      routes: []\n",
			[]string{"quota.plans.free.routes", "name the routes, or write all"}},
		{"routes a word", "quota:\n  plans:\n    free:\n      routes: some\n",
			[]string{"quota.plans.free.routes", "want all, or a list of route names"}},
		{"routes twice", "quota:\n  plans:\n    free:\n      routes: all\n      routes: [a]\n",
			[]string{"routes", "already set"}},
		{"a message for no limit", "quota:\n  plans:\n    free:\n      messages: {requests_per_week: x}\n",
			[]string{"quota.plans.free.messages", `"requests_per_week" is not a limit that refuses`}},
		{"a message for a limit that never refuses", "quota:\n  plans:\n    free:\n      messages: {max_session_s: x}\n",
			[]string{"quota.plans.free.messages", `"max_session_s" is not a limit that refuses`}},
		{"an empty message", "quota:\n  plans:\n    free:\n      messages: {requests_per_day: \" \"}\n",
			[]string{"quota.plans.free.messages", "requests_per_day: a message must be 1–500 bytes"}},
		{"messages a list", "quota:\n  plans:\n    free:\n      messages: [a]\n",
			[]string{"quota.plans.free.messages", "want a mapping of limit names to messages"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("got no error, want one mentioning %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

// A plan whose daily tokens are fewer than what every chat turn and
// completion reserves (chat.estimate_tokens) could never admit one: every
// request would be 429 until midnight. Startup refuses it, naming both
// keys; a plan with just enough, or unlimited, starts.
func TestPlanTokensBelowTheTurnEstimate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       []string // nil: accepted
	}{
		{"below the default estimate", "quota:\n  plans:\n    tiny:\n      tokens_per_day: 3999\n",
			[]string{"quota.plans.tiny.tokens_per_day", "3999", "chat.estimate_tokens", "4000"}},
		{"below the file's estimate", "chat:\n  estimate_tokens: 20000\n",
			[]string{"quota.plans.free.tokens_per_day", "10000", "chat.estimate_tokens", "20000"}},
		{"exactly the estimate", "quota:\n  plans:\n    tiny:\n      tokens_per_day: 4000\n", nil},
		{"unlimited", "chat:\n  estimate_tokens: 20000\nquota:\n  plans:\n    free:\n      tokens_per_day: unlimited\n    pro:\n      tokens_per_day: unlimited\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tc.yaml))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got %v, want the file accepted", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got no error, want one mentioning %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to mention %q", err, w)
				}
			}
		})
	}
}
