package audit

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
)

// A refused status or kind is answered with every value the listing
// takes, each of which it accepts: the lists are docs/audit.md's tables,
// written out here rather than read from the code under test (the
// message once left out flagged, and voice_answer).
func TestFilterErrorNamesEveryValue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		param string
		want  []string
	}{
		{"status", []string{"pending", "success", "degraded", "refused", "parse_error", "validation_error",
			"pii_leak", "medical_claim_blocked", "flagged"}},
		{"kind", []string{"chat", "completion", "voice_tool", "live_delegation", "voice_answer"}},
	}
	for _, tc := range tests {
		t.Run(tc.param, func(t *testing.T) {
			t.Parallel()
			_, err := ParseFilter(url.Values{tc.param: {"bogus"}}, now)
			if e := apierr.From(err); err == nil || e.Code != apierr.InvalidRequest {
				t.Fatalf("%s=bogus: got %v, want INVALID_REQUEST", tc.param, err)
			}
			msg := apierr.From(err).Message
			for _, v := range tc.want {
				if !strings.Contains(msg, " "+v) {
					t.Errorf("%s=bogus: got %q, want it to name %s", tc.param, msg, v)
				}
				if _, err := ParseFilter(url.Values{tc.param: {v}}, now); err != nil {
					t.Errorf("%s=%s: got %v, want it accepted", tc.param, v, err)
				}
			}
		})
	}
}
