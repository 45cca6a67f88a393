package responses

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// A stored response is its owner's alone: another user's id is the 404
// of an id that does not exist, so ids are not probed.
func errNoSuchResponse(param string) error {
	e := apierr.New(apierr.NotFound, "No response with that id.").With("type", "invalid_request_error")
	if param != "" {
		e = e.With("param", param)
	}
	return e
}

// save keeps a finished response and the conversation it answered,
// each item with its id.
func (s *Service) save(ctx context.Context, userID string, resp *Response, conv []Item) error {
	body, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	in, err := json.Marshal(withIDs(conv))
	if err != nil {
		return err
	}
	_, err = s.env.Pool.Exec(ctx, `INSERT INTO stored_responses (id, user_id, response, input, previous_response_id)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`, resp.ID, userID, body, in, resp.PreviousResponseID)
	if err != nil {
		return database.Error("responses: store response", err)
	}
	return nil
}

// load reads userID's stored response id: the response and the
// conversation that continues from it (its input, then its output).
func (s *Service) load(ctx context.Context, userID, id, param string) (*Response, []Item, error) {
	if !responseIDRE.MatchString(id) {
		return nil, nil, errNoSuchResponse(param)
	}
	var body, in []byte
	err := s.env.Pool.QueryRow(ctx, `SELECT response, input FROM stored_responses WHERE id = $1 AND user_id = $2`, id, userID).
		Scan(&body, &in)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, errNoSuchResponse(param)
	}
	if err != nil {
		return nil, nil, database.Error("responses: read response", err)
	}
	var resp Response
	var conv []Item
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(in, &conv); err != nil {
		return nil, nil, err
	}
	return &resp, append(conv, items(resp.Output)...), nil
}

// HandleGet serves GET /v1/responses/{id}: the caller's stored response.
func (s *Service) HandleGet(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	resp, _, err := s.load(r.Context(), p.UserID, r.PathValue("id"), "")
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, resp)
	return nil
}

// HandleDelete serves DELETE /v1/responses/{id}: the caller's stored
// response is gone. Its usage records stay: they hold no text.
func (s *Service) HandleDelete(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if !responseIDRE.MatchString(id) {
		return errNoSuchResponse("")
	}
	tag, err := s.env.Pool.Exec(r.Context(), `DELETE FROM stored_responses WHERE id = $1 AND user_id = $2`, id, p.UserID)
	if err != nil {
		return database.Error("responses: delete response", err)
	}
	if tag.RowsAffected() == 0 {
		return errNoSuchResponse("")
	}
	httpx.WriteJSON(w, http.StatusOK, Deleted{ID: id, Object: "response", Deleted: true})
	return nil
}

// Purge deletes stored responses older than chat.retention_days (0
// keeps them) and says how many.
func (s *Service) Purge(ctx context.Context) (int64, error) {
	if s.cfg.RetentionDays <= 0 {
		return 0, nil
	}
	tag, err := s.env.Pool.Exec(ctx, `DELETE FROM stored_responses WHERE created_at < now() - make_interval(days => $1)`,
		s.cfg.RetentionDays)
	if err != nil {
		return 0, database.Error("responses: purge", err)
	}
	return tag.RowsAffected(), nil
}
