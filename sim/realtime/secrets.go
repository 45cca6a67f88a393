package realtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// TTL bounds of a client secret, in seconds (the API's).
const (
	minSecretTTL     = 10
	maxSecretTTL     = 7200
	defaultSecretTTL = 600
)

// secretStore holds minted client secrets with the session config each
// carries. Expired secrets are kept a while so that using one reports
// "expired" rather than "unknown", then swept.
type secretStore struct {
	mu sync.Mutex
	m  map[string]mintedSecret
}

type mintedSecret struct {
	session sessionConfig
	expires time.Time
}

func newSecretStore() *secretStore { return &secretStore{m: map[string]mintedSecret{}} }

func (st *secretStore) put(value string, sec mintedSecret, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for v, old := range st.m {
		if now.Sub(old.expires) > time.Hour {
			delete(st.m, v)
		}
	}
	st.m[value] = sec
}

// session returns a copy of the secret's session config, or the error the
// API gives for an unknown or expired secret.
func (st *secretStore) session(value string, now time.Time) (sessionConfig, error) {
	st.mu.Lock()
	sec, ok := st.m[value]
	st.mu.Unlock()
	switch {
	case !ok:
		return nil, core.ErrBadKey()
	case !now.Before(sec.expires):
		return nil, &core.APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
			Message: "The ephemeral key (client secret) has expired. Mint a new one with POST /v1/realtime/client_secrets."}
	}
	return sec.session.clone(), nil
}

// authorizeRealtime accepts an API key (returning a nil session) or a live
// client secret (returning a copy of its session config).
func (s *Server) authorizeRealtime(key string) (sessionConfig, error) {
	if strings.HasPrefix(key, core.EphemeralPrefix) {
		return s.rt.secrets.session(key, s.env.Now())
	}
	return nil, s.env.CheckKey(key)
}

// requireAPIKey refuses a client secret where the API wants a standard key
// (the sideband, hangup), unless Realtime.LaxAuth.
func (s *Server) requireAPIKey(key, what string) *core.APIError {
	if s.rt.cfg.LaxAuth || !strings.HasPrefix(key, core.EphemeralPrefix) {
		return nil
	}
	return &core.APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "A client secret (ephemeral key) cannot be used for " + what + ". Use a standard API key."}
}

// requireSecret refuses a standard key where the API wants a client secret
// (an application/sdp offer), unless Realtime.LaxAuth.
func (s *Server) requireSecret(key string) *core.APIError {
	if s.rt.cfg.LaxAuth || strings.HasPrefix(key, core.EphemeralPrefix) {
		return nil
	}
	return &core.APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "An application/sdp offer must be authenticated with a client secret (ephemeral key). With a standard API key, send multipart/form-data with 'sdp' and 'session'."}
}

// mintRequest is the body of POST /v1/realtime/client_secrets.
type mintRequest struct {
	ExpiresAfter *struct {
		Anchor  *string  `json:"anchor"`
		Seconds *float64 `json:"seconds"`
	} `json:"expires_after"`
	Session json.RawMessage `json:"session"`
}

// MintSecret serves POST /v1/realtime/client_secrets: key, body, model, then
// faults (a mint failure is a 429 or 500 here), then an ek_ secret carrying
// the session config.
func (s *Server) MintSecret(w http.ResponseWriter, r *http.Request) error {
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	if wantsBeta(r) {
		return errBetaShape()
	}
	body, err := s.env.ReadBody(w, r)
	if err != nil {
		return err
	}
	ttl, cfg, err := s.decodeMint(body)
	if err != nil {
		return err
	}
	view := cfg.view()
	if err := s.oa.CheckModel(view.model); err != nil {
		return err
	}
	if f := s.env.Faults.Take(EndpointRealtimeClientSecrets, view.model); f != nil {
		s.env.Stats.Fault(EndpointRealtimeClientSecrets, f.Kind)
		if _, err := s.oa.ResponseFault(r.Context(), f, false); err != nil {
			return err
		}
	}
	now := s.env.Now()
	value := core.EphemeralPrefix + core.RandomID() + core.RandomID()[:8]
	expires := now.Add(time.Duration(ttl) * time.Second)
	s.rt.secrets.put(value, mintedSecret{session: cfg.clone(), expires: expires}, now)
	core.WriteJSON(w, http.StatusOK, struct {
		Value     string        `json:"value"`
		ExpiresAt int64         `json:"expires_at"`
		Session   sessionConfig `json:"session"`
	}{value, expires.Unix(), cfg})
	return nil
}

func (s *Server) decodeMint(body []byte) (int, sessionConfig, error) {
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return 0, nil, core.ErrInvalidJSON()
	}
	var req mintRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return 0, nil, core.JSONError(err, "")
	}
	var whole map[string]any
	if err := json.Unmarshal(body, &whole); err == nil {
		if apiErr := CheckFields(whole, clientSecretFields(), ""); apiErr != nil {
			return 0, nil, apiErr
		}
	}
	ttl := defaultSecretTTL
	if ea := req.ExpiresAfter; ea != nil {
		if ea.Anchor != nil && *ea.Anchor != "created_at" {
			return 0, nil, core.ErrInvalidValue("expires_after.anchor", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'created_at'.", *ea.Anchor))
		}
		if sec := ea.Seconds; sec != nil {
			switch {
			case *sec != float64(int(*sec)):
				return 0, nil, core.ErrInvalidType("expires_after.seconds", "an integer", "a number")
			case *sec < minSecretTTL:
				return 0, nil, core.ErrInvalidValue("expires_after.seconds", fmt.Sprintf("Invalid 'expires_after.seconds': integer below minimum value. Expected a value >= %d, but got %d instead.", minSecretTTL, int(*sec)))
			case *sec > maxSecretTTL:
				return 0, nil, core.ErrInvalidValue("expires_after.seconds", fmt.Sprintf("Invalid 'expires_after.seconds': integer above maximum value. Expected a value <= %d, but got %d instead.", maxSecretTTL, int(*sec)))
			}
			ttl = int(*sec)
		}
	}
	cfg := newSessionConfig(&s.rt.cfg)
	update, apiErr := decodeObject(req.Session, "session", false)
	if apiErr == nil && update != nil {
		apiErr = checkSession(update, "session")
	}
	if apiErr != nil {
		return 0, nil, apiErr
	}
	cfg.apply(update, &s.rt.cfg)
	return ttl, cfg, nil
}
