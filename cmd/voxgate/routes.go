package main

import (
	_ "embed"
	"net/http"

	"github.com/voxgate/voxgate/internal/server"
	"github.com/voxgate/voxgate/web"
)

// routes is the whole API surface of voxgate, in one place. Each entry says
// who may call it: public, any user, or a role. Routes marked Stream bound
// their own work; every other route gets server.request_timeout.
func routes(m *Main) []server.Route {
	s, voice, chat, compl, fin := m.Server, m.Voice, m.Chat, m.Completions, m.Finance
	resp := m.Responses
	rs := []server.Route{
		{Pattern: "GET /healthz", Handler: s.Public(s.Healthz)},
		{Pattern: "GET /readyz", Handler: s.Public(s.Readyz)},
		{Pattern: "GET /openapi.json", Handler: s.Public(serveOpenAPI)},

		{Pattern: "GET /v1/me", Handler: s.User(m.Quota.HandleMe)},
		{Pattern: "GET /v1/tools", Handler: s.User(m.Tools.HandleList)},

		// Voice (DESIGN §6). Reading and ending a session work with the AI
		// switched off, so a session can always be closed and charged.
		// Without a provider, voice is off and every route answers 503.
		{Pattern: "POST /v1/voice", Handler: s.AI(voice.HandleAction)},
		{Pattern: "POST /v1/voice/sessions", Handler: s.AI(voice.HandleStart)},
		{Pattern: "GET /v1/voice/sessions", Handler: s.User(voice.HandleList)},
		{Pattern: "GET /v1/voice/sessions/{id}", Handler: s.User(voice.HandleGet)},
		{Pattern: "POST /v1/voice/sessions/{id}/tool-calls", Handler: s.AI(voice.HandleToolCall)},
		{Pattern: "POST /v1/voice/sessions/{id}/sdp", Handler: s.AI(voice.HandleSDP)},
		{Pattern: "POST /v1/voice/sessions/{id}/end", Handler: s.User(voice.HandleEnd)},

		// Chat (DESIGN §7). A turn streams and bounds its own work; reading
		// and deleting conversations work with the AI switched off.
		{Pattern: "POST /v1/chat", Handler: s.AI(chat.HandleChat), Stream: true},
		// The OpenAI-compatible endpoint (DESIGN §7): a routed call bounds
		// its own work, as a turn does.
		{Pattern: "POST /v1/chat/completions", Handler: s.AI(compl.HandleCompletions), Stream: true},
		{Pattern: "GET /v1/models", Handler: s.User(compl.HandleModels)},
		{Pattern: "GET /v1/models/{id}", Handler: s.User(compl.HandleModel)},
		// The Responses API (issue #41): a response streams and bounds its
		// own work; reading and deleting a stored one work with the AI
		// switched off.
		{Pattern: "POST /v1/responses", Handler: s.AI(resp.HandleCreate), Stream: true},
		{Pattern: "GET /v1/responses/{id}", Handler: s.User(resp.HandleGet)},
		{Pattern: "GET /v1/responses/{id}/input_items", Handler: s.User(resp.HandleInputItems)},
		{Pattern: "DELETE /v1/responses/{id}", Handler: s.User(resp.HandleDelete)},
		{Pattern: "GET /v1/chat/sessions", Handler: s.User(chat.HandleList)},
		{Pattern: "GET /v1/chat/sessions/{id}/messages", Handler: s.User(chat.HandleMessages)},
		{Pattern: "DELETE /v1/chat/sessions/{id}", Handler: s.User(chat.HandleDelete)},

		{Pattern: "PUT /v1/admin/users/{id}/plan", Handler: s.Admin(m.Quota.SetPlanHandler)},

		// The provider router (DESIGN §11), for operators: each target's
		// breaker. The AI audit log (DESIGN §12): every turn, completion,
		// voice tool call and live delegation, and one turn's row with its
		// failover_trace (never sent to users).
		{Pattern: "GET /v1/admin/providers", Handler: s.Admin(handleProviders(m.Router))},
		{Pattern: "GET /v1/admin/audit", Handler: s.Admin(m.Audit.HandleList)},
		{Pattern: "GET /v1/admin/chat/turns/{turn_id}", Handler: s.Admin(m.Audit.HandleGet)},

		// The browser pages (DESIGN §1, docs/web.md): public HTML and
		// content-hashed assets; every figure on them comes from the /v1
		// routes, called with the user's own token. The chart is the
		// finance summary's cost per day drawn as SVG (roles admin and
		// finance, as the summary).
		{Pattern: "GET /admin", Handler: s.Public(m.Web.HandleAdmin)},
		{Pattern: "GET /demo", Handler: s.Public(m.Web.HandleDemo)},
		{Pattern: "GET /web/{file}", Handler: s.Public(m.Web.HandleAsset)},
		{Pattern: "GET /v1/admin/costs/chart.svg", Handler: s.Finance(web.Chart(fin.HandleSummary))},

		// Finance (DESIGN §10): roles admin and finance. The CSV streams a
		// whole range, so it bounds its own work.
		{Pattern: "GET /v1/admin/sessions", Handler: s.Finance(fin.HandleSessions)},
		{Pattern: "GET /v1/admin/sessions/{id}", Handler: s.Finance(fin.HandleDetail)},
		{Pattern: "GET /v1/admin/costs/summary", Handler: s.Finance(fin.HandleSummary)},
		{Pattern: "GET /v1/admin/costs.csv", Handler: s.Finance(fin.HandleCSV), Stream: true},
		{Pattern: "GET /v1/admin/costs.jsonl", Handler: s.Finance(fin.HandleJSONL), Stream: true},
		{Pattern: "GET /v1/admin/costs/manifest", Handler: s.Finance(fin.HandleManifest)},
		{Pattern: "POST /v1/admin/costs/reprice", Handler: s.Finance(m.Ledger.HandleReprice)},
		{Pattern: "GET /v1/admin/costs/reconcile", Handler: s.Finance(fin.HandleReconcile(providerUsage(m.Config, m.Getenv)))},
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
