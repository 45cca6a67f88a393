package tools

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

// listItem is one tool in GET /v1/tools.
type listItem struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Voice       bool            `json:"voice"`
	Tier        Tier            `json:"tier"`
	SafetyLevel SafetyLevel     `json:"safety_level"`
	WritesTo    []string        `json:"writes_to"`
	Source      string          `json:"source"`
}

type listResponse struct {
	Plan       string     `json:"plan"`
	Items      []listItem `json:"items"`
	NextCursor *string    `json:"next_cursor"`
}

// HandleList serves GET /v1/tools: the tools the caller's plan may use,
// with ?voice=true for the voice allowlist only. It needs an authenticated
// route. The list is short and whole, so next_cursor is always null.
func (e *Executor) HandleList(w http.ResponseWriter, r *http.Request) error {
	p, ok := auth.FromContext(r.Context())
	if !ok || p.UserID == "" {
		return apierr.New(apierr.Unauthorized, "")
	}
	q, err := httpx.Query(r, "voice")
	if err != nil {
		return err
	}
	voiceOnly := false
	if q.Has("voice") {
		b, err := strconv.ParseBool(q.Get("voice"))
		if err != nil {
			return apierr.New(apierr.InvalidRequest, "voice must be true or false.")
		}
		voiceOnly = b
	}
	plan, _, err := e.plans.PlanFor(r.Context(), p)
	if err != nil {
		return err
	}
	items := []listItem{}
	for _, t := range e.reg.ForPlan(plan, voiceOnly) {
		writes := t.WritesTo
		if writes == nil {
			writes = []string{}
		}
		items = append(items, listItem{Name: t.Name, Description: t.Description, Parameters: t.Parameters,
			Voice: t.Voice, Tier: t.Tier, SafetyLevel: t.SafetyLevel, WritesTo: writes, Source: t.source})
	}
	httpx.WriteJSON(w, http.StatusOK, listResponse{Plan: plan, Items: items})
	return nil
}

var _ httpx.HandlerFunc = (*Executor)(nil).HandleList
