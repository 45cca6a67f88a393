package config

import (
	"strings"
	"testing"
)

func TestLedgerRetention(t *testing.T) {
	if got := Default().Ledger.RetentionMonths; got != 0 {
		t.Fatalf("default retention %d months, want 0 (keep forever)", got)
	}
	for _, tc := range []struct {
		name  string
		value int
		ok    bool
	}{{"forever", 0, true}, {"a year", 12, true}, {"negative", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.Ledger.RetentionMonths = tc.value
			err := c.Validate()
			if got := err == nil || !strings.Contains(err.Error(), "ledger.retention_months"); got != tc.ok {
				t.Fatalf("retention %d: %v, want ok %v", tc.value, err, tc.ok)
			}
		})
	}
}
