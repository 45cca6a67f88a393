package chat

import (
	"testing"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/safety"
)

// An answered turn's status: a blocked medical claim first, then the
// router's fallback, then success only with every required filter; a
// failed turn's is its code's class (unit.FailedStatus).
func TestTurnAuditStatus(t *testing.T) {
	t.Parallel()
	all := audit.Required(audit.KindChat)
	for _, tc := range []struct {
		name     string
		ran      []string
		degraded bool
		flags    []safety.Flag
		want     audit.Status
	}{
		{"every filter ran", all, false, nil, audit.Success},
		{"only input ran", []string{audit.FilterInput}, false, nil, audit.Degraded},
		{"the fallback answered", all, true, nil, audit.Degraded},
		{"a medical claim blocked", all, false, []safety.Flag{{Type: "medical_claim", Blocked: true}}, audit.MedicalClaimBlocked},
		{"a claim flagged, not blocked", all, false, []safety.Flag{{Type: "medical_claim"}}, audit.Success},
		{"a write blocked", all, false, []safety.Flag{{Type: safety.UnsafeValue, Blocked: true}}, audit.Success},
	} {
		tr := &turn{ran: tc.ran, degraded: tc.degraded}
		if got := tr.answeredStatus(&Response{SafetyFlags: tc.flags}); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
