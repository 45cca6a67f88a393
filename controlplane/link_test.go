package controlplane_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

// A voice session links only to the caller's own existing chat sessions,
// on start (chat_session_id) and on the action endpoint (sessionId);
// another user's, or one that does not exist, is 404 and links nothing.
func TestChatLinkOwnOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	cases := []struct {
		name   string
		owner  string // whose chat session is named: "me", "other", or "" for none such
		action bool   // link through POST /v1/voice execute_tool rather than on start
		want   int
	}{
		{"start: own chat session", "me", false, http.StatusCreated},
		{"start: another user's", "other", false, http.StatusNotFound},
		{"start: none such", "", false, http.StatusNotFound},
		{"action: own chat session", "me", true, http.StatusOK},
		{"action: another user's", "other", true, http.StatusNotFound},
		{"action: none such", "", true, http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, other := newUser(t, "free"), newUser(t, "free")
			chatID := "chat-" + p.UserID
			if tc.owner != "" {
				user := map[string]string{"me": p.UserID, "other": other.UserID}[tc.owner]
				if _, err := f.pool.Exec(t.Context(), `INSERT INTO chat_sessions (id, user_id) VALUES ($1, $2)`, chatID, user); err != nil {
					t.Fatal(err)
				}
			}
			var w *httptest.ResponseRecorder
			var voiceID string
			if tc.action {
				voiceID = mustStart(t, f, p, `{"mode":"direct"}`).SessionID
				w = call(t, f.svc.HandleAction, p, "POST", "/v1/voice",
					[]byte(fmt.Sprintf(`{"action":"execute_tool","toolName":"echo","toolArgs":{"q":"x"},"sessionId":%q}`, chatID)), "")
			} else {
				w = call(t, f.svc.HandleStart, p, "POST", "/v1/voice/sessions",
					[]byte(fmt.Sprintf(`{"mode":"direct","chat_session_id":%q}`, chatID)), "")
				if w.Code == http.StatusCreated {
					voiceID = decode[controlplane.StartResponse](t, w).SessionID
				}
			}
			if w.Code != tc.want {
				t.Fatalf("got %d %s, want %d", w.Code, w.Body, tc.want)
			}
			if voiceID == "" {
				return
			}
			var linked *string
			if err := f.pool.QueryRow(t.Context(), `SELECT chat_session_id FROM voice_sessions WHERE id = $1`, voiceID).Scan(&linked); err != nil {
				t.Fatal(err)
			}
			wantLinked := tc.want < 300
			if got := linked != nil && *linked == chatID; got != wantLinked {
				t.Errorf("got chat_session_id %v, want linked %v to %q", linked, wantLinked, chatID)
			}
		})
	}
}

// An empty /end body ends the session however it was framed: with
// Content-Length: 0 or chunked with no data.
func TestEndEmptyBody(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	cases := []struct {
		name    string
		body    string
		chunked bool
	}{
		{"fixed length, empty", "", false},
		{"chunked, empty", "", true},
		{"chunked, a JSON body", `{"reason":"app_closed"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newUser(t, "free")
			id := mustStart(t, f, p, `{"mode":"direct"}`).SessionID
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // a reader of unknown length: sent chunked
			}
			r := httptest.NewRequest("POST", "/v1/voice/sessions/"+id+"/end", body)
			if tc.chunked {
				r.ContentLength, r.TransferEncoding = -1, []string{"chunked"}
			}
			if tc.body != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			r = r.WithContext(auth.WithPrincipal(context.WithoutCancel(t.Context()), p))
			r.SetPathValue("id", id)
			w := httptest.NewRecorder()
			httpx.Handle(f.svc.HandleEnd).ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				t.Fatalf("got %d %s, want 200", w.Code, w.Body)
			}
			if s := decode[controlplane.Session](t, w); s.EndedAt == nil {
				t.Errorf("got a session not ended: %+v", s)
			}
		})
	}
}
