package billing_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A range the provider's usage and costs APIs cannot answer is 400
// INVALID_REQUEST before any call to them (it was 503 AI_UNAVAILABLE
// after the provider's 400): days before 1970-01-01 (start_time is Unix
// seconds, which the API refuses below 0) and more than 180 days at once
// (docs/billing.md, "Reconciliation"). 180 days is the Costs API's most
// buckets in one page, written here from the spec, not read from the code.
func TestReconcileRefusesARangeTheProviderCannotAnswer(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	s, ts := simtest.NewServer(t, sim.Config{})
	h := fx.ledger.HandleReconcile(billing.NewOpenAIUsage(ts.URL+"/v1", "sk-admin-test"))
	requests := func() int64 {
		st := s.Stats().Endpoints
		return st[sim.EndpointOrgUsageCompletions].Requests + st[sim.EndpointOrgCosts].Requests
	}
	for _, q := range []string{
		"from=0001-01-01&to=9999-12-31",
		"from=1969-12-01&to=1970-01-02",
		"from=2026-01-01&to=2026-07-01", // 181 days
		"from=2025-01-01&to=2026-01-01",
	} {
		rec := get(t, h, "/v1/admin/costs/reconcile?"+q)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "INVALID_REQUEST") ||
			!strings.Contains(rec.Body.String(), "180 days") {
			t.Errorf("%s: got %d %s, want 400 INVALID_REQUEST naming the 180 days", q, rec.Code, rec.Body)
		}
	}
	if n := requests(); n != 0 {
		t.Fatalf("the simulator's usage and costs requests: got %d, want 0", n)
	}
	// The widest range allowed, 180 days, is read from the provider.
	rec := get(t, h, "/v1/admin/costs/reconcile?from=2026-01-01&to=2026-06-30")
	if rec.Code != http.StatusOK {
		t.Fatalf("180 days: got %d %s, want 200", rec.Code, rec.Body)
	}
	if n := requests(); n == 0 {
		t.Fatal("180 days: the simulator saw no request; the counter does not count")
	}
}
