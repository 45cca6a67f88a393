package chat

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/safety"
)

// maxBody caps a chat request: a 2,000-character message, a small app
// context and the rest of the envelope.
const maxBody = 64 << 10

// maxContextBytes caps the app's context object, which the model reads.
const maxContextBytes = 4 << 10

// Request is the body of POST /v1/chat (DESIGN §7).
type Request struct {
	Message   string          `json:"message"`
	SessionID string          `json:"session_id,omitempty"`
	Stream    *bool           `json:"stream,omitempty"`
	Workflow  string          `json:"workflow,omitempty"`
	Context   json.RawMessage `json:"context,omitempty"`
	Confirm   *Confirm        `json:"confirm,omitempty"`
}

// Confirm answers a confirmation_required event.
type Confirm struct {
	CallID string `json:"call_id"`
	Allow  *bool  `json:"allow"`
}

// decodeChat reads a POST /v1/chat: its body, sanitized and checked, and
// its Idempotency-Key ("" without one).
func decodeChat(r *http.Request) (*Request, string, error) {
	var req Request
	if err := httpx.Decode(r, &req, httpx.DecodeOptions{MaxBytes: maxBody}); err != nil {
		return nil, "", err
	}
	if err := req.normalize(); err != nil {
		return nil, "", err
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" {
		if err := checkKey(key); err != nil {
			return nil, "", err
		}
	}
	return &req, key, nil
}

// streaming is the request's stream flag; absent means true.
func (r *Request) streaming() bool { return r.Stream == nil || *r.Stream }

// normalize sanitizes and checks the request in place. A message is
// required except when the request answers a confirmation.
func (r *Request) normalize() error {
	r.Message = safety.Sanitize(r.Message)
	n := utf8.RuneCountInString(r.Message)
	switch {
	case n > MaxMessageChars:
		return apierr.Errorf(apierr.InvalidRequest, "message must be at most %d characters.", MaxMessageChars)
	case n == 0 && r.Confirm == nil:
		return apierr.New(apierr.InvalidRequest, "message must not be empty.")
	}
	if r.SessionID != "" && !validID(r.SessionID) {
		return apierr.New(apierr.NotFound, "")
	}
	if r.Workflow != "" && !validID(r.Workflow) {
		return apierr.New(apierr.InvalidRequest, "workflow must name a tool.")
	}
	if len(r.Context) > 0 {
		if len(r.Context) > maxContextBytes {
			return apierr.Errorf(apierr.InvalidRequest, "context must be at most %d bytes.", maxContextBytes)
		}
		var obj map[string]any
		if json.Unmarshal(r.Context, &obj) != nil {
			return apierr.New(apierr.InvalidRequest, "context must be a JSON object.")
		}
		if len(obj) == 0 {
			r.Context = nil
		} else {
			r.Context, _ = json.Marshal(obj)
		}
	}
	if c := r.Confirm; c != nil {
		if c.Allow == nil {
			return apierr.New(apierr.InvalidRequest, "confirm.allow must be true or false.")
		}
		if !validID(c.CallID) {
			return apierr.New(apierr.NotFound, "")
		}
	}
	return nil
}

// fingerprint identifies what the request asks, once normalized: the
// message, the session, the workflow, the context (its keys sorted by
// normalize) and the confirmation. The stream flag is left out: it picks
// the form of the answer, not the answer, and a retry may ask for the other
// form (DESIGN §7).
func (r *Request) fingerprint() []byte {
	b, _ := json.Marshal(struct {
		Message   string          `json:"m"`
		SessionID string          `json:"s"`
		Workflow  string          `json:"w"`
		Context   json.RawMessage `json:"c"`
		Confirm   *Confirm        `json:"f"`
	}{r.Message, r.SessionID, r.Workflow, r.Context, r.Confirm})
	sum := sha256.Sum256(append([]byte("chat request v1\n"), b...))
	return sum[:]
}

// validID accepts the ids this package hands out and tool names: 1–200
// bytes of [A-Za-z0-9_.:-].
func validID(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}
