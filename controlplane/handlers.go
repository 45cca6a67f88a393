package controlplane

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/page"
	"github.com/voxgate/voxgate/quota"
)

// maxSmallBody caps the bodies of start and end, which are a few fields.
const maxSmallBody = 16 * 1024

// HandleStart serves POST /v1/voice/sessions.
func (s *Service) HandleStart(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	var req StartRequest
	if err := httpx.Decode(r, &req, httpx.DecodeOptions{MaxBytes: maxSmallBody}); err != nil {
		return err
	}
	if req.Key, err = quota.RequestKey(r); err != nil {
		return err
	}
	out, err := s.Start(r.Context(), p, req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, out)
	return nil
}

// HandleToolCall serves POST /v1/voice/sessions/{id}/tool-calls.
func (s *Service) HandleToolCall(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	var req ToolCallRequest
	if err := httpx.Decode(r, &req, httpx.DecodeOptions{MaxBytes: MaxToolCallBytes}); err != nil {
		return err
	}
	res, err := s.ExecuteTool(r.Context(), p, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}

// endBody is the body of POST /v1/voice/sessions/{id}/end. The usage is
// kept raw: it is read in the provider's shape, unknown fields ignored.
type endBody struct {
	Reason string          `json:"reason"`
	Usage  json.RawMessage `json:"usage"`
}

// HandleEnd serves POST /v1/voice/sessions/{id}/end.
func (s *Service) HandleEnd(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	var body endBody
	if hasBody(r) {
		if err := httpx.Decode(r, &body, httpx.DecodeOptions{MaxBytes: maxSmallBody}); err != nil {
			return err
		}
	}
	usage, err := parseUsage(body.Usage)
	if err != nil {
		return err
	}
	sess, err := s.End(r.Context(), p.UserID, r.PathValue("id"), EndRequest{Reason: body.Reason, Usage: usage})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, sess)
	return nil
}

// hasBody says whether r carries a body at all: an empty one ends a
// session whether it came with Content-Length: 0 or chunked with no data
// (whose length is unknown until read). A body that is there is left
// whole for Decode.
func hasBody(r *http.Request) bool {
	if r.ContentLength >= 0 || r.Body == nil {
		return r.ContentLength > 0
	}
	br := bufio.NewReader(r.Body)
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		return false
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return true
}

// HandleGet serves GET /v1/voice/sessions/{id}.
func (s *Service) HandleGet(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	sess, err := s.Get(r.Context(), p.UserID, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, sess)
	return nil
}

// HandleList serves GET /v1/voice/sessions: the caller's own, newest first.
func (s *Service) HandleList(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	req, err := page.Parse(r)
	if err != nil {
		return err
	}
	list, err := s.List(r.Context(), p.UserID, req)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// actionBody is the seed-compatible POST /v1/voice body.
type actionBody struct {
	Action string `json:"action"`
	StartRequest
	ToolName  string          `json:"toolName"`
	ToolArgs  json.RawMessage `json:"toolArgs"`
	SessionID string          `json:"sessionId"`
	CallID    string          `json:"callId"`
}

// HandleAction serves POST /v1/voice, the action endpoint of the seed
// apps: start_session is the REST start; execute_tool runs in the user's
// active voice session (sessionId may name it, or a chat session to link
// to it).
func (s *Service) HandleAction(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	var body actionBody
	if err := httpx.Decode(r, &body, httpx.DecodeOptions{MaxBytes: MaxToolCallBytes}); err != nil {
		return err
	}
	switch body.Action {
	case "start_session":
		out, err := s.Start(r.Context(), p, body.StartRequest)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusCreated, out)
		return nil
	case "execute_tool":
		id, err := s.activeSession(r, p.UserID, body.SessionID)
		if err != nil {
			return err
		}
		res, err := s.ExecuteTool(r.Context(), p, id, ToolCallRequest{CallID: body.CallID, Name: body.ToolName, Arguments: body.ToolArgs})
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, res)
		return nil
	}
	return apierr.New(apierr.InvalidRequest, "action must be start_session or execute_tool.")
}

// activeSession finds the voice session an action runs in: the one named,
// or the user's newest open one, which a named chat session (the user's
// own) is linked to.
func (s *Service) activeSession(r *http.Request, userID, named string) (string, error) {
	if validSessionID(named) {
		return named, nil
	}
	if named != "" && (len(named) > 128 || !auth.ValidSubject(named)) {
		return "", apierr.New(apierr.InvalidRequest, "sessionId is not valid.")
	}
	if named != "" {
		if err := s.checkChatLink(r.Context(), userID, named); err != nil {
			return "", err
		}
	}
	var id string
	err := s.pool.QueryRow(r.Context(), `UPDATE voice_sessions SET chat_session_id = coalesce(chat_session_id, nullif($2, ''))
		WHERE id = (SELECT id FROM voice_sessions WHERE user_id = $1 AND ended_at IS NULL AND expires_at > now()
		            ORDER BY started_at DESC LIMIT 1)
		RETURNING id`, userID, named).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", apierr.New(apierr.NotFound, "There is no active voice session; start one first.")
	}
	if err != nil {
		return "", database.Error("controlplane: find the active session", err)
	}
	return id, nil
}
