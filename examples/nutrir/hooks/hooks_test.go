package hooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/examples/nutrir"
	"github.com/voxgate/voxgate/internal/pgtest"
)

var secret = []byte("nutrir-test-secret-0123456789")

// practice is the tool server over a database holding schema.sql.
func practice(t *testing.T) *Server {
	t.Helper()
	db := pgtest.Pool(t)
	if _, err := db.Exec(context.Background(), nutrir.Schema); err != nil {
		t.Fatalf("schema.sql: %v", err)
	}
	return New(db, secret)
}

// post sends a call signed as voxgate signs it.
func post(s http.Handler, tool, callID, user, args string) *httptest.ResponseRecorder {
	body := `{"call_id":"` + callID + `","user_id":"` + user + `","session_id":"s","name":"` + tool + `","arguments":` + args + `}`
	r := httptest.NewRequest("POST", "/hooks/"+tool, strings.NewReader(body))
	r.Header.Set("X-Voxgate-Signature", sign(secret, []byte(body), time.Now()))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func sign(key, body []byte, at time.Time) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// A call delivered twice, even at once, writes once and both deliveries
// get the first one's answer.
func TestWriteOncePerCallID(t *testing.T) {
	t.Parallel()
	s := practice(t)
	args := `{"client_id":1,"start_time":"2030-01-07T09:00:00Z","end_time":"2030-01-07T09:30:00Z","type":"check_in","location_type":"phone"}`
	var wg sync.WaitGroup
	answers := make([]string, 5)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := post(s, "create_appointment", "turn_a.1", "dev-user", args)
			answers[i] = w.Body.String()
			if w.Code != 200 {
				t.Errorf("delivery %d: %d %s", i, w.Code, answers[i])
			}
		}()
	}
	wg.Wait()
	var n, audits int
	if err := s.db.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM nutrir.appointments WHERE start_time = '2030-01-07T09:00:00Z'),
		(SELECT count(*) FROM nutrir.audit_log WHERE call_id = 'turn_a.1')`).Scan(&n, &audits); err != nil {
		t.Fatal(err)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(answers[0]), &first); err != nil || first["created"] != true {
		t.Fatalf("answer %s", answers[0])
	}
	for _, a := range answers[1:] {
		var got map[string]any
		_ = json.Unmarshal([]byte(a), &got)
		if g, _ := json.Marshal(got); string(g) != mustJSON(first) {
			t.Errorf("a duplicate answered %s, the first %s", a, answers[0])
		}
	}
	if n != 1 || audits != 1 {
		t.Errorf("%d appointments and %d audit rows for one call id, want 1 and 1", n, audits)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// Who may do what: a refused write writes nothing and is answered 200
// with an error the model reads; a stranger is no member of the practice.
func TestRefusals(t *testing.T) {
	t.Parallel()
	s := practice(t)
	cases := []struct{ tool, user, args, want string }{
		{"deactivate_staff", "nut-1", `{"staff_id":"nut-2"}`, "Only a practice admin"},
		{"deactivate_staff", "dev-user", `{"staff_id":"dev-user"}`, "your own account"},
		{"deactivate_staff", "dev-user", `{"staff_id":"nobody"}`, "no staff member nobody"},
		{"get_client", "stranger", `{"id":1}`, "not an active member"},
		{"get_client", "nut-old", `{"id":1}`, "not an active member"},
		{"cancel_appointment", "dev-user", `{"id":6}`, "no open appointment 6"}, // completed
		{"create_client", "dev-user", `{"first_name":"A","last_name":"B","primary_nutritionist_id":"asst-1","consent_given":true}`, "no active nutritionist asst-1"},
		{"create_client", "dev-user", `{"first_name":"A","last_name":"B","primary_nutritionist_id":"nut-1","consent_given":false}`, "consent"},
		{"update_appointment", "dev-user", `{"id":1,"end_time":"2000-01-01T00:00:00Z"}`, "after start_time"},
		{"list_appointments", "dev-user", `{"from_date":"tomorrow"}`, "RFC 3339"},
	}
	for i, c := range cases {
		w := post(s, c.tool, "turn_r."+strconv.Itoa(i), c.user, c.args)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"error":`) || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s by %s %s: %d %s, want an error saying %q", c.tool, c.user, c.args, w.Code, w.Body, c.want)
		}
	}
	var active bool
	var audits int
	if err := s.db.QueryRow(context.Background(), `SELECT (SELECT is_active FROM nutrir.staff WHERE id = 'nut-2'),
		(SELECT count(*) FROM nutrir.audit_log)`).Scan(&active, &audits); err != nil || !active || audits != 0 {
		t.Errorf("nut-2 active %v, %d audit rows after refusals (%v)", active, audits, err)
	}
}

// Only voxgate's signed calls are answered; nothing is read before the
// signature is checked (the server here has no database).
func TestSignature(t *testing.T) {
	t.Parallel()
	s := New(nil, secret)
	body := `{"call_id":"c","user_id":"dev-user","name":"get_client","arguments":{"id":1}}`
	for name, c := range map[string]struct {
		path, sig string
		want      int
	}{
		"unsigned":       {"/hooks/get_client", "", 401},
		"other secret":   {"/hooks/get_client", sign([]byte("another-secret-0123456789"), []byte(body), time.Now()), 401},
		"too old":        {"/hooks/get_client", sign(secret, []byte(body), time.Now().Add(-6*time.Minute)), 401},
		"unknown tool":   {"/hooks/drop_tables", sign(secret, []byte(body), time.Now()), 404},
		"name mismatch":  {"/hooks/get_staff", sign(secret, []byte(body), time.Now()), 400},
		"not under path": {"/get_client", sign(secret, []byte(body), time.Now()), 404},
	} {
		r := httptest.NewRequest("POST", c.path, strings.NewReader(body))
		r.Header.Set("X-Voxgate-Signature", c.sig)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", name, w.Code, c.want)
		}
	}
}

// FuzzVerify: no header but the right MAC of the body is accepted.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(sign(secret, []byte("{}"), now), []byte("{}"))
	f.Add("t=1800000000,v1=00", []byte("{}"))
	f.Add("t=,v1=,t=1", []byte(""))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		if verify(secret, header, body, now) == nil && !signedWithin(header, body) {
			t.Fatalf("accepted %q for %q", header, body)
		}
	})
}

// signedWithin reports whether header carries the right MAC of body for
// one of the timestamps it names (verify has checked the window).
func signedWithin(header string, body []byte) bool {
	for _, part := range strings.Split(header, ",") {
		if ts, ok := strings.CutPrefix(strings.TrimSpace(part), "t="); ok {
			n, err := strconv.ParseInt(ts, 10, 64)
			if err == nil && strings.Contains(header, sign(secret, body, time.Unix(n, 0))[len("t="+ts+","):]) {
				return true
			}
		}
	}
	return false
}
