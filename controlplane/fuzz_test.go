package controlplane_test

import (
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/controlplane"
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
	fx := newFixture(f, options{configFn: func(c *controlplane.Config) { c.ToolCallsPerMinute = 1 << 30 }})
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
