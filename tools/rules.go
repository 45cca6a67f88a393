package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/voxgate/voxgate/safety"
)

// The rules of a tool definition, one implementation each, whether the
// definition is built in or comes from config (tools.builtins,
// tools.webhooks). Package config only decodes the YAML; NewRegistry
// applies these at startup, and for a definition from config names the
// key that breaks one ("tools.webhooks[0] (book_class).timeout").
const (
	DefaultTimeout   = 5 * time.Second
	MaxTimeout       = 60 * time.Second
	DefaultMaxTokens = 1000
	MaxMaxTokens     = 16000
	// minMaxTokens keeps room for at least a truncation notice.
	minMaxTokens = 32

	DefaultWebhookMaxResponse = 64 << 10
	MaxWebhookMaxResponse     = 4 << 20
)

// nameRE is the name rule every provider accepts for function names.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// envNameRE keeps secret_env to a plain environment variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ruleError is a broken rule, named by the definition's field, so that
// NewRegistry can name the config key it came from.
type ruleError struct{ field, problem string }

func (e *ruleError) Error() string { return e.field + ": " + e.problem }

func broken(field, format string, args ...any) error {
	return &ruleError{field: field, problem: fmt.Sprintf(format, args...)}
}

func checkName(name string) error {
	if !nameRE.MatchString(name) {
		return broken("name", "%q must be 1–64 letters, digits, _ or -", name)
	}
	return nil
}

// checkTimeout checks a timeout once its default is filled in.
func checkTimeout(d time.Duration) error {
	if d <= 0 || d > MaxTimeout {
		return broken("timeout", "must be more than 0 and at most %s (default %s), got %s", MaxTimeout, DefaultTimeout, d)
	}
	return nil
}

// checkMaxTokens checks a budget once its default is filled in.
func checkMaxTokens(n int) error {
	if n < minMaxTokens || n > MaxMaxTokens {
		return broken("max_tokens", "must be between %d and %d (default %d), got %d", minMaxTokens, MaxMaxTokens, DefaultMaxTokens, n)
	}
	return nil
}

func checkTier(t Tier, voice bool) error {
	switch t {
	case TierNone, TierStandard, TierElevated:
	default:
		return broken("tier", "%q must be none, standard or elevated", t)
	}
	if voice && t != TierNone {
		return broken("voice", "true needs tier none, not %s: voice has no confirmation card", t)
	}
	return nil
}

func checkSafetyLevel(s SafetyLevel) error {
	switch s {
	case SafetySafe, SafetyReview, SafetyRestricted:
		return nil
	}
	return broken("safety_level", "%q must be safe, review or restricted", s)
}

// checkPlans refuses a plan that is not configured, so a typo cannot
// silently hide a tool from everyone.
func checkPlans(names, plans []string) error {
	for _, pl := range names {
		if len(plans) > 0 && !slices.Contains(plans, pl) {
			return broken("plans", "%q is not a configured plan (have %v)", pl, plans)
		}
	}
	return nil
}

// checkMeasures refuses a measure the write guard does not know (a typo
// would leave a value unchecked), and an argument the tool's parameters do
// not name (the guard would never see it).
func checkMeasures(measures map[string]string, params json.RawMessage) error {
	if len(measures) == 0 {
		return nil
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(params, &schema) // checkParameters has refused what does not decode
	for _, arg := range slices.Sorted(maps.Keys(measures)) {
		m := measures[arg]
		if _, ok := safety.Lookup(m); !ok {
			return broken("measures", "%s: %q is not a measure (have %s)", arg, m, strings.Join(slices.Sorted(maps.Keys(safety.Ranges())), ", "))
		}
		if _, ok := schema.Properties[arg]; !ok {
			return broken("measures", "%q is not one of the tool's parameters", arg)
		}
	}
	return nil
}
