package billing

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
)

// A filter given empty is refused with a message that says what leaving
// it out does: every user, kind, mode or model, but for tz the range read
// in UTC (it once said "leave it out to include every tz").
func TestEmptyFilterSaysWhatLeavingItOutDoes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct{ param, want string }{
		{"user_id", "user_id is empty; leave it out to include every user."},
		{"kind", "kind is empty; leave it out to include every kind."},
		{"mode", "mode is empty; leave it out to include every mode."},
		{"model", "model is empty; leave it out to include every model."},
		{"tz", "tz is empty; leave it out for UTC, or name an IANA time zone such as Europe/Berlin."},
	}
	for _, tc := range tests {
		t.Run(tc.param, func(t *testing.T) {
			t.Parallel()
			_, _, err := parseFilter(httptest.NewRequest("GET", "/v1/admin/costs/summary?"+tc.param+"=", nil), now)
			e := apierr.From(err)
			if err == nil || e.Code != apierr.InvalidRequest || e.Message != tc.want {
				t.Fatalf("%s=: got %v, want INVALID_REQUEST %q", tc.param, err, tc.want)
			}
			if strings.Contains(e.Message, "every tz") {
				t.Errorf("%s=: %q", tc.param, e.Message)
			}
		})
	}
}
