package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testkit"
)

// An end that meets a database that is down is answered 503 and kept on
// the durable path: once the database is back the session is ended with
// the app's usage on its record, charged up to when the end came (not up
// to when the database returned), and a retried end returns that record.
func TestSessionEndSurvivesADatabaseOutage(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	proxy := pgtest.NewProxy(t, dbURL)
	direct := pgtest.NewPool(t, dbURL, 2)
	const retryFor = time.Second
	sp, err := spool.New(spool.Params{Dir: t.TempDir(), RetryFor: retryFor, Attempt: 500 * time.Millisecond, Logger: testkit.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{url: proxy.URL, spool: sp})
	p := newUser(t, "pro")
	begun := time.Now()
	start := mustStart(t, f, p, `{}`)

	proxy.Cut()
	usage := []byte(`{"usage":{"input_token_details":{"text_tokens":500},"output_token_details":{"audio_tokens":200}}}`)
	endAt := time.Since(begun)
	w := call(t, f.svc.HandleEnd, p, "POST", "/", usage, start.SessionID)
	if w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Fatalf("end with the database down: got %d %s, want 503 with Retry-After", w.Code, w.Body)
	}
	if n, _ := sp.Pending(); n != 1 {
		t.Fatalf("spooled ends: got %d, want 1", n)
	}

	proxy.Restore()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ran := make(chan struct{})
	go func() { sp.Run(ctx); close(ran) }()
	defer func() { cancel(); <-ran }()
	testkit.Eventually(t, ctx, "the spooled end", func() bool { n, _ := sp.Pending(); return n == 0 })

	var reason, source string
	var durationMS, textIn, audioOut int64
	if err := direct.QueryRow(ctx, `SELECT s.end_reason, s.duration_ms, r.usage_source, r.text_in, r.audio_out
		FROM voice_sessions s JOIN usage_records r ON r.session_id = s.id AND r.kind = 'voice' WHERE s.id = $1`,
		start.SessionID).Scan(&reason, &durationMS, &source, &textIn, &audioOut); err != nil {
		t.Fatalf("the session after the outage: %v", err)
	}
	if reason != controlplane.ReasonUserHangup || source != "client_reported" || textIn != 500 || audioOut != 200 {
		t.Errorf("got reason %s, source %s, text_in %d, audio_out %d; want user_hangup, client_reported, 500, 200",
			reason, source, textIn, audioOut)
	}
	// The end came endAt after the start was sent; the database came back
	// at least retryFor later.
	if limit := endAt + retryFor/2; time.Duration(durationMS)*time.Millisecond > limit {
		t.Errorf("duration: got %d ms, want at most %s (the end's time, not the database's return)", durationMS, limit)
	}

	again := call(t, f.svc.HandleEnd, p, "POST", "/", usage, start.SessionID)
	got := decode[controlplane.Session](t, again)
	if again.Code != 200 || got.Cost == nil || got.Cost.Tokens.TextIn != 500 {
		t.Errorf("retried end: got %d %s, want 200 with the record", again.Code, again.Body)
	}
	var records int
	if err := direct.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE session_id = $1`, start.SessionID).Scan(&records); err != nil {
		t.Fatal(err)
	}
	if records != 1 {
		t.Errorf("records: got %d, want 1", records)
	}
}

// During an outage another user's end of a session is spooled apart from
// the owner's: the owner's own end, spooled after it, is the one that
// ends the session once the database is back, with the owner's reason and
// usage; the other's job finds no session of its user and ends nothing.
func TestAnotherUsersSpooledEndDoesNotTakeTheOwnersPlace(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	proxy := pgtest.NewProxy(t, dbURL)
	direct := pgtest.NewPool(t, dbURL, 2)
	sp, err := spool.New(spool.Params{Dir: t.TempDir(), RetryFor: 300 * time.Millisecond, Attempt: 200 * time.Millisecond, Logger: testkit.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{url: proxy.URL, spool: sp})
	alice, bob := newUser(t, "pro"), newUser(t, "pro")
	start := mustStart(t, f, alice, `{}`)

	proxy.Cut()
	if w := call(t, f.svc.HandleEnd, bob, "POST", "/", []byte(`{"reason":"error"}`), start.SessionID); w.Code != 503 {
		t.Fatalf("bob's end with the database down: %d %s, want 503", w.Code, w.Body)
	}
	usage := []byte(`{"reason":"app_closed","usage":{"input_token_details":{"text_tokens":500}}}`)
	if w := call(t, f.svc.HandleEnd, alice, "POST", "/", usage, start.SessionID); w.Code != 503 {
		t.Fatalf("alice's end with the database down: %d %s, want 503", w.Code, w.Body)
	}
	if n, _ := sp.Pending(); n != 2 {
		t.Fatalf("spooled ends: %d, want bob's and alice's apart", n)
	}

	proxy.Restore()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ran := make(chan struct{})
	go func() { sp.Run(ctx); close(ran) }()
	defer func() { cancel(); <-ran }()
	testkit.Eventually(t, ctx, "the spooled ends", func() bool { n, _ := sp.Pending(); return n == 0 })

	var reason, user string
	var textIn int64
	if err := direct.QueryRow(ctx, `SELECT s.end_reason, r.user_id, r.text_in
		FROM voice_sessions s JOIN usage_records r ON r.session_id = s.id AND r.kind = 'voice' WHERE s.id = $1`,
		start.SessionID).Scan(&reason, &user, &textIn); err != nil {
		t.Fatalf("alice's session after the outage: %v", err)
	}
	if reason != controlplane.ReasonAppClosed || user != alice.UserID || textIn != 500 {
		t.Fatalf("ended %s for %s with text_in %d; want alice's own app_closed end with her 500 tokens", reason, user, textIn)
	}
}
