package chat_test

import "testing"

// TestForeignSessionCountsNothing: a turn naming another user's session is
// 404 before admission, so it counts no request and begins no audit row
// (the owner is checked before any effect); the owner's own turn in the
// same session still runs.
func TestForeignSessionCountsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	own := f.post(t, call{user: "u-owner", body: map[string]any{"message": "hi", "stream": false}})
	if own.Status != 200 {
		t.Fatalf("the owner's turn: %d %v", own.Status, own.Body)
	}
	sessionID := own.Body["session_id"].(string)
	r := f.post(t, call{user: "u-intruder", body: map[string]any{"message": "hi", "stream": false, "session_id": sessionID}})
	if r.Status != 404 || r.Body["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("another user's session: %d %v, want 404 NOT_FOUND", r.Status, r.Body)
	}
	if n := f.count(t, `SELECT count(*) FROM quota_users WHERE user_id = 'u-intruder' AND day_requests > 0`); n != 0 {
		t.Errorf("the refused turn counted a request")
	}
	if n := f.count(t, `SELECT (SELECT count(*) FROM ai_audit_log WHERE user_id = 'u-intruder')
		+ (SELECT count(*) FROM ai_audit_pending WHERE user_id = 'u-intruder')`); n != 0 {
		t.Errorf("the refused turn left %d audit rows", n)
	}
	again := f.post(t, call{user: "u-owner", body: map[string]any{"message": "more", "stream": false, "session_id": sessionID}})
	if again.Status != 200 || again.Body["session_id"] != sessionID {
		t.Errorf("the owner's next turn: %d %v", again.Status, again.Body)
	}
}

// TestTurnAuditRowRidesAdmission: an admitted turn's audit row, which now
// rides its admission, is written with the session it ran in and ends
// final. (quota's TestRidersRunOnlyForAdmitted holds that a refused
// request's rider writes nothing.)
func TestTurnAuditRowRidesAdmission(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	r := f.post(t, call{user: "u-rides", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status != 200 {
		t.Fatalf("%d %v", r.Status, r.Body)
	}
	if n := f.count(t, `SELECT count(*) FROM ai_audit_log WHERE user_id = 'u-rides' AND kind = 'chat'
		AND status = 'success' AND session_id = $1`, r.Body["session_id"]); n != 1 {
		t.Errorf("%d final audit rows with the turn's session, want 1", n)
	}
}
