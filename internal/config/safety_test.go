package config

import (
	"strings"
	"testing"
	"time"
)

func TestSafetyJudge(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("routes:\n  - {name: default, targets: [{provider: openai, model: m}]}\n  - {name: judge, targets: [{provider: openai, model: small}]}\n" +
		"safety:\n  judge: {route: judge, budget: 500ms, band: 1.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if j := cfg.Safety.Judge; j.Route != "judge" || j.Budget != 500*time.Millisecond || j.Band != 1.5 {
		t.Errorf("judge = %+v", j)
	}
	if cfg, err := Parse(nil); err != nil || cfg.Safety.Judge.Route != "" {
		t.Errorf("default: judge %+v, err %v; want no judge", cfg.Safety.Judge, err)
	}
	for _, c := range []struct{ yaml, want string }{
		{"safety:\n  judge: {route: nowhere}\n", `safety.judge.route: "nowhere" is not among routes (have [default])`},
		{"safety:\n  judge: {route: default, budget: -1s}\n", `safety.judge.budget: must be between 0 and 10s`},
		{"safety:\n  judge: {route: default, budget: 1m}\n", `safety.judge.budget: must be between 0 and 10s`},
		{"safety:\n  judge: {route: default, band: -0.5}\n", `safety.judge.band: must be between 0 and 10`},
		{"safety:\n  judges: {}\n", `judges`},
	} {
		if _, err := Parse([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}
