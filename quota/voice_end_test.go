package quota

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
)

// TestActiveSessionWins: when a request window refuses a second voice start
// too, the caller still learns the active session (CONCURRENT_LIMIT with
// session_id), the answer it can act on, as a typed error.
func TestActiveSessionWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerHour: 1, MaxSessionSeconds: 60, VoiceSessions: 1}), newClock(t0))
	p := user(t)
	if _, err := s.ReserveVoice(ctx, p, p.UserID+"-a"); err != nil {
		t.Fatal(err)
	}
	_, err := s.ReserveVoice(ctx, p, p.UserID+"-b") // the hour (3580 s) and the active session refuse
	var active *ActiveSessionError
	if !errors.As(err, &active) || active.SessionID != p.UserID+"-a" {
		t.Fatalf("got %v, want an ActiveSessionError naming %s-a", err, p.UserID)
	}
	wantDenied(t, err, apierr.ConcurrentLimit, ReasonVoiceActive, inflightRetry)
	rec := httptest.NewRecorder()
	httpx.Error(rec, httptest.NewRequest("POST", "/v1/voice/sessions", nil), err)
	var body struct {
		Error struct {
			Code      apierr.Code `json:"code"`
			SessionID string      `json:"session_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 429 || body.Error.Code != apierr.ConcurrentLimit || body.Error.SessionID != p.UserID+"-a" {
		t.Errorf("got %d %s, want 429 CONCURRENT_LIMIT with session_id %s-a", rec.Code, rec.Body, p.UserID)
	}

	// With no session active, the hour is the answer.
	if _, err := s.SettleVoice(ctx, p.UserID, p.UserID+"-a", 5); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReserveVoice(ctx, p, p.UserID+"-c")
	wantDenied(t, err, apierr.RateLimited, ReasonHour, 3580)
	if errors.As(err, &active) {
		t.Errorf("got an ActiveSessionError with no session active: %v", err)
	}
}

// TestVoiceMonthBoundary: a session that crosses into a new month is
// charged to the new month for its seconds from the 1st, 00:00 UTC, on,
// whether it is ended or reclaimed unended.
func TestVoiceMonthBoundary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	plan := onePlan(config.Plan{VoiceSecondsPerMonth: 1000, MaxSessionSeconds: 300, VoiceSessions: 1})
	june := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		start     time.Time     // the session's start
		end       time.Duration // after the start
		used      int64
		wantJune  int64
		reclaimed bool
	}{
		{name: "ends in the new month", start: june.Add(-time.Minute), end: 3 * time.Minute, used: 180, wantJune: 120},
		{name: "a part second counts whole", start: june.Add(-1500 * time.Millisecond), end: time.Minute, used: 60, wantJune: 59},
		{name: "used seconds all before the 1st", start: june.Add(-time.Minute), end: 2 * time.Minute, used: 30, wantJune: 0},
		{name: "starts in the month", start: june.Add(time.Second), end: time.Minute, used: 60, wantJune: 60},
		{name: "reclaimed unended", start: june.Add(-2 * time.Minute), end: 300*time.Second + voiceGraceS*time.Second, wantJune: 180, reclaimed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock(tc.start)
			s := mustService(t, pool, plan, clk)
			p := user(t)
			r, err := s.ReserveVoice(ctx, p, p.UserID+"-a")
			if err != nil {
				t.Fatal(err)
			}
			clk.Add(tc.end)
			if tc.reclaimed {
				if err := s.Sweep(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.SettleVoice(ctx, p.UserID, r.SessionID, tc.used)
			if err != nil {
				t.Fatal(err)
			}
			if got.MonthUsed != tc.wantJune || got.Reclaimed != tc.reclaimed {
				t.Errorf("got %+v, want %d s charged to June (reclaimed %v)", got, tc.wantJune, tc.reclaimed)
			}
			rep, err := s.Report(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if u := rep.Usage[ReasonVoiceSeconds]; u.Used != tc.wantJune {
				t.Errorf("got %d s used in June's report, want %d", u.Used, tc.wantJune)
			}
		})
	}
}
