package responses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// Endpoint names POST /v1/responses in faults and stats; EndpointOne is
// the routes on one stored response (GET, DELETE, input_items).
const (
	Endpoint    = "/v1/responses"
	EndpointOne = "/v1/responses/{id}"
)

// FaultKinds are the faults POST /v1/responses can serve (docs/sim.md).
func FaultKinds() []core.FaultKind {
	return []core.FaultKind{core.FaultRateLimit, core.FaultQuota, core.FaultServerError, core.FaultUnavailable, core.FaultTimeout,
		core.FaultMalformedJSON, core.FaultCutStream, core.FaultSlowDrip, core.FaultStreamError,
		core.FaultContextLength, core.FaultContentFilter, core.FaultReset, core.FaultSlowStart}
}

// Server serves the Responses API over the Chat Completions engine.
type Server struct {
	env    *core.Env
	oa     *openai.Server
	store  *store
	sealer *sealer
}

// New is the Responses surface over env and oa's engine.
func New(env *core.Env, oa *openai.Server) *Server {
	return &Server{env: env, oa: oa, store: newStore(), sealer: newSealer()}
}

// Create serves POST /v1/responses in the real API's order: key, body,
// model, previous response; then any injected fault; then the scripted
// answer, stored unless store is false.
func (s *Server) Create(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	body, err := s.env.ReadBody(w, r)
	if err != nil {
		return err
	}
	req, err := decodeCreate(body)
	if err != nil {
		return err
	}
	models := &s.oa.Chat.Models
	if !models.Accepts(req.Model) || s.oa.Life.Retired(req.Model, s.env.Now()) {
		return core.ErrModelNotFound(req.Model)
	}
	reasons := models.IsReasoning(req.Model)
	if req.effort() != "" && !reasons {
		return core.ErrUnsupportedParam("reasoning.effort", "Unsupported parameter: 'reasoning.effort' is not supported with this model.")
	}
	key := core.Bearer(r)
	var conv []item
	if id := req.PreviousResponseID; id != nil {
		prev := s.store.get(key, *id)
		if prev == nil {
			return previousNotFound(*id)
		}
		conv = append(conv, prev.conv...)
	}
	conv = append(conv, req.items...)
	if err := checkPairing(conv); err != nil {
		return err
	}
	kept, err := s.checkReasoning(key, req.items)
	if err != nil {
		return err
	}
	chat := req.chat(conv)
	if reasons {
		effort := req.effort()
		chat.ReasoningEffort = &effort
		if err := models.CheckEffort(chat); err != nil {
			return err
		}
	}
	ctx := r.Context()
	f := s.env.Faults.Take(Endpoint, req.Model)
	if f != nil {
		s.env.Stats.Fault(Endpoint, f.Kind)
		switch f.Kind {
		case core.FaultReset:
			panic(http.ErrAbortHandler)
		case core.FaultContextLength:
			e := core.ErrContextLength(req.Model)
			e.Param = "input"
			return e
		}
		if handled, err := s.oa.ResponseFault(ctx, f, req.stream()); handled {
			return err
		}
	}
	model := models.Snapshot(req.Model)
	prompt := openai.PromptTokens{Bytes: openai.PromptBytes(chat)}
	cacheKey := key
	if req.PromptCacheKey != nil {
		cacheKey += "\x00" + *req.PromptCacheKey
	}
	prompt.Cached, prompt.Written = s.oa.Chat.Cache.CachedTokens(s.env.Now(), cacheKey, model, chat, prompt.Bytes)
	prompt.ReportWrites(models.BillsCacheWrites(req.Model))
	a := newAnswer(req, chat, s.oa.Script.Plan(chat), model, prompt, reasons)
	if req.includes(IncludeEncrypted) {
		for i := range a.out {
			if a.out[i].Type == "reasoning" {
				a.out[i].Encrypted = s.sealer.seal(key, a.out[i].ID)
			}
		}
	}
	// Counted once the request is answered, not on a fault's refusal.
	s.env.Stats.Reasoning(Endpoint, kept)
	resp := shell(req, "resp_"+core.RandomID(), model, a.effort, s.env.Now())
	s.oa.BillCompletion(s.env.Now(), a.c, a.reasoning)
	h := w.Header()
	h.Set("Openai-Processing-Ms", strconv.FormatInt(time.Since(start).Milliseconds(), 10))
	h.Set("Openai-Version", "2020-10-01")
	keep := func(final *response) {
		if req.store() {
			s.store.put(key, &stored{resp: final, input: req.items, conv: append(conv, a.out...)})
		}
	}
	if req.stream() {
		return s.stream(ctx, w, req, resp, a, f, keep)
	}
	a.finish(resp, s.env.Now())
	keep(resp)
	ttft := s.oa.TTFT(req.Model)
	if f != nil && f.Kind == core.FaultSlowStart {
		ttft = time.Duration(f.IntervalMS) * time.Millisecond
	}
	if f == nil || f.Kind != core.FaultSlowDrip {
		if err := s.env.Wait(ctx, ttft+s.env.TokenDelay(a.usage.OutputTokens)); err != nil {
			return err
		}
	}
	return s.oa.WriteWhole(ctx, w, "application/json", mustJSON(resp), f)
}

// Get serves GET /v1/responses/{id}: the stored response, for its key.
func (s *Server) Get(w http.ResponseWriter, r *http.Request) error {
	st, err := s.lookup(r)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, st.resp)
	return nil
}

// Delete serves DELETE /v1/responses/{id}; a later GET is 404.
func (s *Server) Delete(w http.ResponseWriter, r *http.Request) error {
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	id := r.PathValue("id")
	if !s.store.delete(core.Bearer(r), id) {
		return responseNotFound(id)
	}
	core.WriteJSON(w, http.StatusOK, deleted{ID: id, Object: "response.deleted", Deleted: true})
	return nil
}

// InputItems serves GET /v1/responses/{id}/input_items: the request's
// input items, paged by limit (1–100, default 20), order (desc by
// default) and after.
func (s *Server) InputItems(w http.ResponseWriter, r *http.Request) error {
	st, err := s.lookup(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return core.ErrInvalidValue("limit", fmt.Sprintf("Invalid 'limit': expected an integer between 1 and 100, but got '%s' instead.", v))
		}
		limit = n
	}
	items := make([]item, 0, len(st.input))
	switch order := q.Get("order"); order {
	case "", "desc":
		for i := len(st.input) - 1; i >= 0; i-- {
			items = append(items, st.input[i])
		}
	case "asc":
		items = append(items, st.input...)
	default:
		return core.ErrInvalidValue("order", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'asc' and 'desc'.", order))
	}
	if after := q.Get("after"); after != "" {
		for i, it := range items {
			if it.ID == after {
				items = items[i+1:]
				break
			}
		}
	}
	list := itemList{Object: "list", Data: []json.RawMessage{}}
	if len(items) > limit {
		items, list.HasMore = items[:limit], true
	}
	for _, it := range items {
		list.Data = append(list.Data, it.render("completed"))
	}
	if n := len(items); n > 0 {
		list.FirstID, list.LastID = &items[0].ID, &items[n-1].ID
	}
	core.WriteJSON(w, http.StatusOK, list)
	return nil
}

func (s *Server) lookup(r *http.Request) (*stored, error) {
	if err := s.env.Authorize(r); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	st := s.store.get(core.Bearer(r), id)
	if st == nil {
		return nil, responseNotFound(id)
	}
	return st, nil
}

// responseNotFound is the API's 404 for an id its key cannot see.
func responseNotFound(id string) *core.APIError {
	return &core.APIError{Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: fmt.Sprintf("Response with id '%s' not found.", id)}
}

// previousNotFound is the API's 404 for a previous_response_id its key
// cannot see (never stored, deleted, another organization's).
func previousNotFound(id string) *core.APIError {
	return &core.APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "previous_response_id",
		Code: "previous_response_not_found", Message: fmt.Sprintf("Previous response with id '%s' not found.", id)}
}
