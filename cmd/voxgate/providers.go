package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/llm"
)

// providerStatus is one target's health on GET /v1/admin/providers, with
// a sentence saying why it is in that state, so an operator can see why
// traffic moved.
type providerStatus struct {
	llm.TargetStatus
	Reason string `json:"reason"`
}

// handleProviders serves GET /v1/admin/providers (role admin): every
// route target's circuit breaker in this process (DESIGN §11).
func handleProviders(r *llm.Router) httpx.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) error {
		items := []providerStatus{}
		for _, s := range r.Status() {
			items = append(items, providerStatus{TargetStatus: s, Reason: breakerReason(s)})
		}
		httpx.WriteJSON(w, http.StatusOK, map[string]any{"items": items})
		return nil
	}
}

// breakerReason says why a target is in its state, by the breaker's rule:
// three failures within five minutes, with no success between them, open
// it for a minute; then one request probes it.
func breakerReason(s llm.TargetStatus) string {
	switch {
	case !s.Configured:
		return "not configured: its provider has no key, or no adapter for its kind"
	case s.State == llm.BreakerOpen:
		// Not s.Failures: the breaker forgets its failures when it opens,
		// and a failed probe opens it again after one.
		return fmt.Sprintf("open since %s: 3 failures within 5 minutes with no success between, or a failed probe, opened it; "+
			"traffic goes to the next target until one probe at %s", s.OpenedAt.UTC().Format(time.RFC3339),
			s.OpenedAt.Add(time.Minute).UTC().Format(time.RFC3339))
	case s.State == llm.BreakerHalfOpen:
		return "half open: its open minute is over; one probe request decides whether it closes"
	case s.Failures > 0:
		return fmt.Sprintf("closed: %d recent failures since its last success (3 within 5 minutes open it)", s.Failures)
	}
	return "closed: healthy"
}
