package main

import (
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
)

// An open breaker's sentence is true: the breaker forgets its failures
// when it opens (the status reads 0), so the reason says what opens one
// and when it opened and probes, not "0 failures within 5 minutes".
func TestBreakerReasonOfAnOpenTarget(t *testing.T) {
	t.Parallel()
	opened := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	got := breakerReason(llm.TargetStatus{Provider: "openai", Model: "m", Configured: true,
		State: llm.BreakerOpen, Failures: 0, OpenedAt: opened})
	for _, want := range []string{"open since 2026-11-24T09:30:00Z", "3 failures within 5 minutes", "probe", "09:31:00Z"} {
		if !strings.Contains(got, want) {
			t.Errorf("reason %q: want it to say %q", got, want)
		}
	}
	if strings.Contains(got, "0 failures") {
		t.Errorf("reason %q: counts the failures the breaker forgot when it opened", got)
	}
}
