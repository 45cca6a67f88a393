package controlplane_test

import (
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
)

// FuzzToolCallBody sends arbitrary bodies to the tool-call route of a real
// session: every answer is a §6 status with a JSON error body, never a 500.
func FuzzToolCallBody(f *testing.F) {
	for _, seed := range []string{
		`{"call_id":"c1","name":"echo","arguments":"{\"q\":\"x\"}"}`,
		`{"call_id":"c2","name":"echo","arguments":{"q":"x"}}`,
		`{"call_id":"c3","name":"private","arguments":"{}"}`,
		`{"call_id":"","name":"echo","arguments":"not json"}`,
		`{"name":"echo","arguments":"{\"q\":\"\\u0000\"}"}`,
		`{"call_id":"c1","name":"echo","arguments":"{\"q\":\"y\"}"}`,
		`[]`, `null`, `{"call_id":5}`,
	} {
		f.Add([]byte(seed))
	}
	fx := newFixture(f, options{configFn: func(c *config.Voice) { c.ToolCallsPerMinute = 1 << 30 }})
	p := newUser(f, "pro")
	s := mustStart(f, fx, p, `{}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := call(t, fx.svc.HandleToolCall, p, "POST", "/", body, s.SessionID)
		switch w.Code {
		case 200, 400, 403, 404, 409, 413, 422:
		default:
			t.Fatalf("body %q: status %d %s", body, w.Code, w.Body)
		}
		if w.Code != 200 {
			var e errorBody
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code == "" {
				t.Fatalf("body %q: error body %s", body, w.Body)
			}
		}
	})
}

// FuzzOfferBody sends arbitrary bodies to a sideband session's sdp route:
// every answer is 201 with an SDP answer, or a §6 status with a JSON error
// body (a provider's refusal is the app's 422), never a 5xx.
func FuzzOfferBody(f *testing.F) {
	for _, seed := range []string{
		"v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n",
		"v=0\r\n", " v=0", "", "hello", "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n\x00",
		`{"sdp":"v=0"}`,
	} {
		f.Add([]byte(seed))
	}
	fx := newFixture(f, options{})
	p := newUser(f, "pro")
	s := mustStart(f, fx, p, `{"mode":"sideband"}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := postOffer(t, fx, p, s.SessionID, "application/sdp", string(body))
		switch w.Code {
		case 201:
			if w.Header().Get("Content-Type") != "application/sdp" {
				t.Fatalf("body %q: 201 as %s", body, w.Header().Get("Content-Type"))
			}
			return
		case 400, 409, 413, 422:
		default:
			t.Fatalf("body %q: status %d %s", body, w.Code, w.Body)
		}
		var e errorBody
		if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code == "" {
			t.Fatalf("body %q: error body %s", body, w.Body)
		}
	})
}
