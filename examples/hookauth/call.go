package hookauth

import (
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// Call is the body voxgate POSTs to a webhook tool.
type Call struct {
	CallID    string          `json:"call_id"`
	UserID    string          `json:"user_id"`
	SessionID string          `json:"session_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ReadCall reads one call to the tool named name: a body of at most
// maxBody bytes (else 413), signed with secret at about now (else 401),
// naming that tool and a user (else 400). On a refusal it returns the
// status to answer with, and the caller answers nothing else.
func ReadCall(r *http.Request, name string, secret []byte, maxBody int64, now time.Time) (Call, int) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || int64(len(body)) > maxBody {
		return Call{}, http.StatusRequestEntityTooLarge
	}
	if Verify(secret, r.Header.Get("X-Voxgate-Signature"), body, now) != nil {
		return Call{}, http.StatusUnauthorized
	}
	var c Call
	if json.Unmarshal(body, &c) != nil || c.Name != name || c.UserID == "" {
		return Call{}, http.StatusBadRequest
	}
	return c, 0
}
