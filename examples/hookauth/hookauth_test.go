package hookauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"
	"time"
)

var secret = []byte("hookauth-test-secret-0123456789")

// sign is the sender's side, as docs/tools.md states it.
func sign(t time.Time, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	ts := strconv.FormatInt(t.Unix(), 10)
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_900_000_000, 0)
	body := []byte(`{"call_id":"c1","name":"search_recipes"}`)
	cases := []struct {
		name, header string
		body         []byte
		ok           bool
	}{
		{"signed now", sign(now, body), body, true},
		{"signed 299 s ago", sign(now.Add(-299*time.Second), body), body, true},
		{"spaces after the comma", "t=" + strconv.FormatInt(now.Unix(), 10) + ", v1=" + sign(now, body)[len("t=1900000000,v1="):], body, true},
		{"signed 301 s ago", sign(now.Add(-301*time.Second), body), body, false},
		{"signed 301 s ahead", sign(now.Add(301*time.Second), body), body, false},
		{"another body", sign(now, body), []byte(`{"call_id":"c2"}`), false},
		{"no v1", "t=" + strconv.FormatInt(now.Unix(), 10), body, false},
		{"no t", "v1=00", body, false},
		{"empty", "", body, false},
	}
	for _, tc := range cases {
		if err := Verify(secret, tc.header, tc.body, now); (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// The header is the sender's text: whatever it holds, Verify answers
// without panicking, and what it accepts is bound to the secret: the
// same header and body never pass under another one.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_900_000_000, 0)
	f.Add(sign(now, []byte("{}")), []byte("{}"))
	f.Add("t=,v1=", []byte(""))
	f.Add("t=99999999999999999999,v1=zz", []byte("x"))
	f.Add("v1=ab,t=1900000000,t=1", []byte("{}"))
	other := []byte("another-secret-0123456789abcdef")
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		if Verify(secret, header, body, now) == nil && Verify(other, header, body, now) == nil {
			t.Fatalf("%q passes under two secrets", header)
		}
	})
}
