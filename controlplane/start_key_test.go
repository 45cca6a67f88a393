package controlplane_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/quota"
)

// startWithKey is POST /v1/voice/sessions with an Idempotency-Key.
func startWithKey(t *testing.T, f fixture, p auth.Principal, key string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", "/v1/voice/sessions", bytes.NewReader([]byte(`{}`)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", key)
	r = r.WithContext(auth.WithPrincipal(r.Context(), p))
	w := httptest.NewRecorder()
	httpx.Handle(f.svc.HandleStart).ServeHTTP(w, r)
	return w
}

// An Idempotency-Key keys a voice start's reservation (docs/quota.md,
// "Keyed admission"): a retry after a start whose reservation committed
// and whose reply was lost goes on as that session, counted once; a retry
// once the start answered is 409, counting nothing; a key that is not
// 1–255 printable ASCII characters is 400. The lost reply's state (a keyed
// reservation nobody took) is made directly.
func TestStartIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	p := newUser(t, "")
	if w := startWithKey(t, f, p, "has space"); w.Code != http.StatusBadRequest {
		t.Fatalf("a key with a space: got %d %s, want 400", w.Code, w.Body)
	}
	qs, err := quota.New(quota.Params{Pool: f.pool, Config: testgraph.OpenQuota()})
	if err != nil {
		t.Fatal(err)
	}
	lost := randid.New("vs_", 12)
	if _, err := qs.ReserveVoiceKeyed(ctx, p, lost, "start-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(ctx, `UPDATE quota_voice SET admit_taken = false WHERE session_id = $1`, lost); err != nil {
		t.Fatal(err)
	}
	w := startWithKey(t, f, p, "start-1")
	if w.Code != http.StatusCreated {
		t.Fatalf("the retry: got %d %s, want 201", w.Code, w.Body)
	}
	if got := decode[controlplane.StartResponse](t, w).SessionID; got != lost {
		t.Fatalf("the retry: got session %s, want the lost start's %s", got, lost)
	}
	var requests, sessions int64
	if err := f.pool.QueryRow(ctx, `SELECT (SELECT day_requests FROM quota_users WHERE user_id = $1),
		(SELECT count(*) FROM voice_sessions WHERE user_id = $1 AND id = $2)`, p.UserID, lost).Scan(&requests, &sessions); err != nil {
		t.Fatal(err)
	}
	if requests != 1 || sessions != 1 {
		t.Fatalf("after the retry: got %d requests, %d session rows; want 1 and 1", requests, sessions)
	}
	if w := startWithKey(t, f, p, "start-1"); w.Code != http.StatusConflict {
		t.Fatalf("a retry after the start answered: got %d %s, want 409", w.Code, w.Body)
	}
}
