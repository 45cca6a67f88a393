package completions

import (
	"net/http"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/unit"
)

// ModelList is GET /v1/models in OpenAI's shape: the routes the caller's
// plan may use, each a model a client may name.
type ModelList struct {
	Object string      `json:"object"` // "list"
	Data   []ModelInfo `json:"data"`
}

// ModelInfo is one route as a model.
type ModelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`  // "model"
	Created int64  `json:"created"` // when this gateway started: a route has no birth of its own
	OwnedBy string `json:"owned_by"`
}

// HandleModel serves GET /v1/models/{id} (the SDKs' models.retrieve): a
// route the caller's plan may use, as GET /v1/models lists it. Any other
// id is the 404 a completion naming it gets (errNoSuchModel: one answer
// for a route that does not exist and one the plan leaves out, so a
// plan's routes are not probed).
func (s *Service) HandleModel(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if !s.env.RouteAllowed(id, func(string) bool { return true }) {
		return unit.ErrNoSuchModel()
	}
	_, plan, err := s.env.Quota.PlanFor(r.Context(), p)
	if err != nil {
		return err
	}
	if !plan.AllowsRoute(id) {
		return unit.ErrNoSuchModel()
	}
	httpx.WriteJSON(w, http.StatusOK, ModelInfo{ID: id, Object: "model", Created: s.created, OwnedBy: "voxgate"})
	return nil
}

// HandleModels serves GET /v1/models.
func (s *Service) HandleModels(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	_, plan, err := s.env.Quota.PlanFor(r.Context(), p)
	if err != nil {
		return err
	}
	out := ModelList{Object: "list", Data: []ModelInfo{}}
	for _, name := range s.env.Routes() {
		if plan.AllowsRoute(name) {
			out.Data = append(out.Data, ModelInfo{ID: name, Object: "model", Created: s.created, OwnedBy: "voxgate"})
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}
