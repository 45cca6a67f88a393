package unit

import (
	"testing"

	"github.com/voxgate/voxgate/audit"
)

// A failed unit's audit status is its code's class, the output filters'
// codes included; a unit cut short (cancelled) is refused.
func TestFailedStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]audit.Status{"AI_PII_LEAK": audit.PIILeak, "AI_PARSE_ERROR": audit.ParseError,
		"AI_VALIDATION_ERROR": audit.ValidationError, "cancelled": audit.Refused, "AI_UNAVAILABLE": audit.Refused} {
		if got := FailedStatus(code); got != want {
			t.Errorf("FailedStatus(%s) = %s, want %s", code, got, want)
		}
	}
}
