package main

import (
	_ "embed"
	"net/http"

	"github.com/voxgate/voxgate/internal/server"
)

// routes is the whole API surface of voxgate, in one place. Each entry says
// who may call it: public, any user, or a role. Routes marked Stream bound
// their own work; every other route gets server.request_timeout.
func routes(m *Main) []server.Route {
	s := m.Server
	rs := []server.Route{
		{Pattern: "GET /healthz", Handler: s.Public(s.Healthz)},
		{Pattern: "GET /readyz", Handler: s.Public(s.Readyz)},
		{Pattern: "GET /openapi.json", Handler: s.Public(serveOpenAPI)},

		{Pattern: "GET /v1/me", Handler: s.User(m.Quota.HandleMe)},
		{Pattern: "GET /v1/tools", Handler: s.User(m.Tools.HandleList)},

		{Pattern: "PUT /v1/admin/users/{id}/plan", Handler: s.Admin(m.Quota.SetPlanHandler)},
	}
	if m.Config.Server.MetricsAddr == "" {
		// With a metrics listener of its own, the public one does not serve
		// metrics at all.
		rs = append(rs, server.Route{Pattern: "GET /metrics", Handler: s.MetricsHandler()})
	}
	return rs
}

// openapiDoc describes every route in routes; a test keeps the two in step.
//
//go:embed openapi.json
var openapiDoc []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(openapiDoc)
	return err
}
