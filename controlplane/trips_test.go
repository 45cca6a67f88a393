package controlplane_test

import (
	"net/http"
	"testing"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/database"
)

// A direct voice session's round trips to PostgreSQL (issue 36), counted
// by the pool, as voxgate bench --mode voice runs it: the start is the
// reservation and the session row (the provider's mint lies between
// them); the end is one transaction: its begin, the session row locked by
// id and owner, the settlement, then the row's end, the cost record and
// the day's charge in one batch, and the commit. A second end finds the
// first's session and record and writes nothing; another user's end finds
// no row and touches nothing. The pool has one connection, so after a
// warm-up every statement is prepared and nothing else shares the counts.
func TestAVoiceSessionRoundTrips(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{poolSize: 1, noContextTool: true})
	p := newUser(t, "pro")
	const usage = `{"reason":"user_hangup","usage":{"input_tokens":120,"output_tokens":60,` +
		`"input_token_details":{"text_tokens":20,"audio_tokens":100},"output_token_details":{"text_tokens":10,"audio_tokens":50}}}`
	end := func(who string, id string, want int) controlplane.Session {
		t.Helper()
		q := p
		q.UserID = who
		w := call(t, f.svc.HandleEnd, q, "POST", "/", []byte(usage), id)
		if w.Code != want {
			t.Fatalf("end: %d %s; want %d", w.Code, w.Body, want)
		}
		if want != http.StatusOK {
			return controlplane.Session{}
		}
		return decode[controlplane.Session](t, w)
	}
	for range 3 { // every statement prepared
		s := mustStart(t, f, p, `{"mode":"direct"}`)
		end(p.UserID, s.SessionID, http.StatusOK)
		end(p.UserID, s.SessionID, http.StatusOK)
		end("u-someone-else", s.SessionID, http.StatusNotFound)
	}
	steps := []struct {
		name  string
		run   func(id string)
		trips [2]int64 // statements, round trips
	}{
		{name: "another user's end", run: func(id string) { end("u-someone-else", id, http.StatusNotFound) }, trips: [2]int64{3, 3}},
		{name: "end", run: func(id string) { end(p.UserID, id, http.StatusOK) }, trips: [2]int64{7, 5}},
		{name: "second end", run: func(id string) { end(p.UserID, id, http.StatusOK) }, trips: [2]int64{4, 4}},
	}
	s0, r0 := database.Sent(f.pool)
	start := mustStart(t, f, p, `{"mode":"direct"}`)
	s1, r1 := database.Sent(f.pool)
	if s, r := s1-s0, r1-r0; s != 2 || r != 2 {
		t.Errorf("a start sent %v statements in %v round trips; want 2 in 2", s, r)
	}
	for _, st := range steps {
		s0, r0 := database.Sent(f.pool)
		st.run(start.SessionID)
		s1, r1 := database.Sent(f.pool)
		if s, r := s1-s0, r1-r0; s != st.trips[0] || r != st.trips[1] {
			t.Errorf("%s sent %v statements in %v round trips; want %v in %v", st.name, s, r, st.trips[0], st.trips[1])
		}
	}
	// One record, the first end's, however many ends came.
	var n int
	if err := f.pool.QueryRow(t.Context(), `SELECT count(*) FROM usage_records WHERE session_id = $1`, start.SessionID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d records for the session; want 1", n)
	}
}
