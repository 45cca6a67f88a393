package quota

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
)

// TestReport: /v1/me lists every limit of the plan with used, limit,
// remaining and resets_at, in DESIGN §9's JSON shape.
func TestReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), config.DefaultQuota(), newClock(t0))
	p := user(t)
	tk := mustAdmit(t, s, p, Estimate{Tokens: 100, CostMicros: 10, Calls: 1})
	if _, err := s.ReserveVoice(ctx, p, p.UserID+"-v"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Report(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2030, 5, 16, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		limit     string
		used, max int64
		unlimited bool
		resets    time.Time // zero: null
	}{
		{ReasonMinute, 2, 3, false, time.Date(2030, 5, 15, 10, 1, 0, 0, time.UTC)},
		{ReasonHour, 2, 20, false, time.Date(2030, 5, 15, 11, 0, 0, 0, time.UTC)},
		{ReasonDay, 2, 100, false, day},
		{ReasonTokens, 100, 10_000, false, day},
		{ReasonCost, 10, 500_000, false, day},
		{ReasonCalls, 1, 0, true, day},
		{ReasonConcurrent, 1, 1, false, time.Time{}},
		{ReasonVoiceSeconds, 900, 1800, false, time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)},
		{ReasonVoiceActive, 1, 1, false, time.Time{}},
	}
	if len(r.Usage) != len(tests) || r.Plan != "free" {
		t.Errorf("got plan %s with %d limits, want free with %d", r.Plan, len(r.Usage), len(tests))
	}
	for _, tc := range tests {
		u, ok := r.Usage[tc.limit]
		if !ok {
			t.Errorf("%s: missing", tc.limit)
			continue
		}
		if u.Used != tc.used || tc.unlimited != (u.Limit == nil) || (u.Limit != nil && *u.Limit != tc.max) {
			t.Errorf("%s: got used %d limit %v, want %d, %d (unlimited %v)", tc.limit, u.Used, u.Limit, tc.used, tc.max, tc.unlimited)
		}
		if tc.unlimited != (u.Remaining == nil) || (u.Remaining != nil && *u.Remaining != tc.max-tc.used) {
			t.Errorf("%s: got remaining %v, want %d (unlimited %v)", tc.limit, u.Remaining, tc.max-tc.used, tc.unlimited)
		}
		if tc.resets.IsZero() != (u.ResetsAt == nil) || (u.ResetsAt != nil && !u.ResetsAt.Equal(tc.resets)) {
			t.Errorf("%s: got resets_at %v, want %v", tc.limit, u.ResetsAt, tc.resets)
		}
	}

	if _, err := tk.Settle(ctx, Usage{Tokens: 40}); err != nil {
		t.Fatal(err)
	}
	r, err = s.Report(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Usage[ReasonTokens].Used; got != 40 {
		t.Errorf("after settling: got %d tokens used, want 40", got)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Plan  string `json:"plan"`
		Usage map[string]map[string]any
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"used", "limit", "remaining", "resets_at"} {
		if _, ok := wire.Usage[ReasonMinute][key]; !ok {
			t.Errorf("JSON lacks usage.%s.%s: %s", ReasonMinute, key, raw)
		}
	}
}
