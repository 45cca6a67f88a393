package controlplane_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// Fifty starts for one user at once, spread over three replicas: exactly
// one session starts; every other start names an active session.
func TestConcurrentStartsOneActive(t *testing.T) {
	t.Parallel()
	a := newFixture(t, options{})
	replicas := []fixture{a, a.replica(t), a.replica(t)}
	p := newUser(t, "pro")
	codes := make([]int, 50)
	var wg sync.WaitGroup
	for i := range codes {
		f := replicas[i%3]
		wg.Go(func() { codes[i] = call(t, f.svc.HandleStart, p, "POST", "/", []byte(`{}`), "").Code })
	}
	wg.Wait()
	created := 0
	for i, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("start %d: status %d", i, c)
		}
	}
	var rows, held int
	ctx := context.Background()
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM voice_sessions WHERE user_id = $1 AND ended_at IS NULL`, p.UserID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM quota_voice WHERE user_id = $1`, p.UserID).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if created != 1 || rows != 1 || held != 1 {
		t.Fatalf("%d created, %d active rows, %d reservations; want 1 each", created, rows, held)
	}
}

// The per-session cap holds across replicas: of 70 calls sent at once over
// three pools, exactly 60 run, and the rest are 429 with Retry-After.
func TestToolCallCapAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := newFixture(t, options{})
	replicas := []fixture{a, a.replica(t), a.replica(t)}
	p := newUser(t, "pro")
	// Start near the beginning of a minute on the database's clock, so the
	// burst cannot straddle two windows.
	pgtest.FreshMinute(t, a.pool, 20*time.Second)
	s := mustStart(t, a, p, `{}`)
	codes := make([]int, 70)
	retry := make([]string, 70)
	var wg sync.WaitGroup
	for i := range codes {
		f := replicas[i%3]
		body := []byte(fmt.Sprintf(`{"call_id":"call_%d","name":"echo","arguments":"{}"}`, i))
		wg.Go(func() {
			w := call(t, f.svc.HandleToolCall, p, "POST", "/", body, s.SessionID)
			codes[i], retry[i] = w.Code, w.Header().Get("Retry-After")
		})
	}
	wg.Wait()
	ok, limited := 0, 0
	for i, c := range codes {
		switch c {
		case 200:
			ok++
		case 429:
			limited++
			if retry[i] == "" {
				t.Errorf("call %d: 429 without Retry-After", i)
			}
		default:
			t.Fatalf("call %d: status %d", i, c)
		}
	}
	var ran int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_calls WHERE session_id = $1 AND tool = 'echo'`, s.SessionID).Scan(&ran); err != nil {
		t.Fatal(err)
	}
	if ok != 60 || limited != 10 || ran != 60 {
		t.Fatalf("%d ran (%d stored), %d limited; want 60, 10", ok, ran, limited)
	}
}

// A session nobody ended is closed at its reservation, charged in full,
// once, however many replicas sweep at the same moment; a late end then
// attaches the app's usage and the overrun.
func TestSweepExpiredOnceThenLateEnd(t *testing.T) {
	t.Parallel()
	a := newFixture(t, options{})
	replicas := []fixture{a, a.replica(t), a.replica(t)}
	var sessions []controlplane.StartResponse
	var users = []string{}
	for range 5 {
		p := newUser(t, "free")
		s := mustStart(t, a, p, `{}`)
		expire(t, a.pool, s.SessionID, 30*time.Second)
		sessions = append(sessions, s)
		users = append(users, p.UserID)
	}
	var wg sync.WaitGroup
	ended := make([]int, 3)
	for i, f := range replicas {
		wg.Go(func() {
			n, err := f.svc.Sweep(context.Background())
			if err != nil {
				t.Error(err)
			}
			ended[i] = n
		})
	}
	wg.Wait()
	if total := ended[0] + ended[1] + ended[2]; total != 5 {
		t.Fatalf("sweepers ended %v sessions, want 5 in all", ended)
	}
	ctx := context.Background()
	var records, charged int64
	if err := a.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(v.charged_s), 0) FROM usage_records r
		JOIN voice_sessions v ON v.id = r.session_id WHERE v.user_id = ANY($1) AND v.end_reason = 'expired'`, users).Scan(&records, &charged); err != nil {
		t.Fatal(err)
	}
	if records != 5 || charged != 5*900 {
		t.Fatalf("%d records, %d s charged; want 5 records, 4500 s (each in full)", records, charged)
	}
	var monthUsed int64
	if err := a.pool.QueryRow(ctx, `SELECT coalesce(sum(voice_used), 0) FROM quota_users WHERE user_id = ANY($1)`, users).Scan(&monthUsed); err != nil {
		t.Fatal(err)
	}
	if monthUsed != 5*900 {
		t.Fatalf("quota charged %d s, want 4500: the sweeper and quota's reclaim must agree", monthUsed)
	}

	// The app's late end for the first session: its usage is attached once,
	// with the 30 s overrun; the session stays expired.
	p0 := newUser(t, "free")
	p0.UserID = users[0]
	body := []byte(`{"reason":"user_hangup","usage":{"input_token_details":{"text_tokens":1000},"output_token_details":{"audio_tokens":100}}}`)
	w := call(t, a.svc.HandleEnd, p0, "POST", "/", body, sessions[0].SessionID)
	late := decode[controlplane.Session](t, w)
	// 1,000 text in × $4/1M + 100 audio out × $64/1M = 4,000 + 6,400.
	if w.Code != 200 || *late.EndReason != "expired" || late.Cost == nil || late.Cost.CostMicros == nil ||
		*late.Cost.CostMicros != 10_400 || late.Cost.OverrunS < 29 || late.Cost.OverrunS > 40 || late.Cost.UsageSource != "client_reported" {
		t.Fatalf("late end: %d %+v cost %+v", w.Code, late, late.Cost)
	}
	again := decode[controlplane.Session](t, call(t, a.svc.HandleEnd, p0, "POST", "/",
		[]byte(`{"usage":{"output_token_details":{"audio_tokens":99999}}}`), sessions[0].SessionID))
	if *again.Cost.CostMicros != 10_400 {
		t.Fatalf("a second late end changed the record: %+v", again.Cost)
	}
	var dayCost int64
	if err := a.pool.QueryRow(ctx, `SELECT day_cost FROM quota_users WHERE user_id = $1`, users[0]).Scan(&dayCost); err != nil || dayCost != 10_400 {
		t.Fatalf("the day holds %d micros (%v); want the late usage's 10400, once", dayCost, err)
	}
	// Another sweep finds nothing.
	if n, err := a.svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep ended %d (%v), want 0", n, err)
	}
}

// Quota's own reclaim may charge an expired reservation before the sweeper
// comes: the end that follows is not an error and charges nothing more.
func TestEndAfterQuotaReclaimed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	p := newUser(t, "free")
	s := mustStart(t, f, p, `{}`)
	expire(t, f.pool, s.SessionID, 2*time.Minute)
	// Another start of the same user runs quota's reclaim of the expired
	// reservation, charging it in full.
	if w := call(t, f.svc.HandleStart, p, "POST", "/", []byte(`{}`), ""); w.Code != 429 && w.Code != 201 {
		t.Fatalf("second start: %d %s", w.Code, w.Body)
	}
	w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"reason":"app_closed"}`), s.SessionID)
	if w.Code != 200 {
		t.Fatalf("end after reclaim: %d %s", w.Code, w.Body)
	}
	var used int64
	if err := f.pool.QueryRow(context.Background(), `SELECT voice_used FROM quota_users WHERE user_id = $1`, p.UserID).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if used != 900 {
		t.Fatalf("month used %d s, want 900 (charged once, in full)", used)
	}
}
