package sim_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeBadInput: every refusal has the API's status and error shape,
// and the body validates against the spec's ErrorResponse.
func TestRealtimeBadInput(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	var clock atomic.Int64
	clock.Store(time.Now().Unix())
	_, base := testkit.NewSim(t, sim.Config{MaxBodyBytes: 4096, Now: func() time.Time { return time.Unix(clock.Load(), 0) }})
	expired := mint(t, base, recipeSession, 10)
	clock.Add(10) // exactly its TTL: expired
	ek := mint(t, base, recipeSession, 60)

	offer := simtest.NewCaller(t)
	sdp, err := offer.Offer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	form, formType := simtest.CallForm(sdp, recipeSession)
	noSDP, noSDPType := "--b\r\nContent-Disposition: form-data; name=\"session\"\r\n\r\n"+recipeSession+"\r\n--b--\r\n", "multipart/form-data; boundary=b"
	badSession, badSessionType := simtest.CallForm(sdp, `{"type":"realtime","tools":[{"type":"function"}]}`)
	calls, secrets := base+"/v1/realtime/calls", base+"/v1/realtime/client_secrets"
	tests := []struct {
		name, url, key, ctype, body string
		status                      int
		code, param                 string
	}{
		{"malformed SDP", calls, ek, "application/sdp", "hello", 400, "invalid_offer", "sdp"},
		{"empty SDP", calls, ek, "application/sdp", "", 400, "invalid_offer", "sdp"},
		{"SDP without audio", calls, ek, "application/sdp", "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=sctp-port:5000\r\n", 400, "invalid_offer", "sdp"},
		{"wrong content type", calls, ek, "application/json", `{"sdp":"v=0"}`, 400, "", ""},
		{"multipart without sdp", calls, simtest.TestKey, noSDPType, noSDP, 400, "missing_required_parameter", "sdp"},
		{"multipart bad session", calls, simtest.TestKey, badSessionType, string(badSession), 400, "missing_required_parameter", "session.tools[0].name"},
		{"no key", calls, "", formType, string(form), 401, "", ""},
		{"unknown ephemeral key", calls, "ek_nope", "application/sdp", sdp, 401, "invalid_api_key", ""},
		{"expired ephemeral key", calls, expired, "application/sdp", sdp, 401, "invalid_api_key", ""},
		{"oversized call", calls, ek, "application/sdp", sdp + strings.Repeat("a", 600<<10), 413, "request_too_large", ""},
		{"ephemeral key cannot mint", secrets, ek, "application/json", `{}`, 401, "invalid_api_key", ""},
		{"mint not an object", secrets, simtest.TestKey, "application/json", `[]`, 400, "", ""},
		{"mint TTL too short", secrets, simtest.TestKey, "application/json", `{"expires_after":{"anchor":"created_at","seconds":5}}`, 400, "invalid_value", "expires_after.seconds"},
		{"mint TTL too long", secrets, simtest.TestKey, "application/json", `{"expires_after":{"seconds":7201}}`, 400, "invalid_value", "expires_after.seconds"},
		{"mint bad anchor", secrets, simtest.TestKey, "application/json", `{"expires_after":{"anchor":"now"}}`, 400, "invalid_value", "expires_after.anchor"},
		{"mint transcription session", secrets, simtest.TestKey, "application/json", `{"session":{"type":"transcription"}}`, 400, "invalid_value", "session.type"},
		{"mint oversized", secrets, simtest.TestKey, "application/json", `{"session":{"type":"realtime","instructions":"` + strings.Repeat("a", 5000) + `"}}`, 413, "request_too_large", ""},
		{"hangup unknown call", base + "/v1/realtime/calls/rtc_nope/hangup", simtest.TestKey, "", "", 404, "call_id_not_found", "call_id"},
		{"sideband unknown call", base + "/v1/realtime?call_id=rtc_nope", simtest.TestKey, "", "", 404, "call_id_not_found", "call_id"},
		{"socket without model", base + "/v1/realtime", simtest.TestKey, "", "", 400, "missing_required_parameter", "model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodPost
			if strings.HasSuffix(tc.url, "nope") || strings.HasSuffix(tc.url, "/v1/realtime") {
				method = http.MethodGet
			}
			resp, body := do(t, method, tc.url, tc.key, tc.ctype, []byte(tc.body))
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if err := spec.Validate("ErrorResponse", body); err != nil {
				t.Errorf("error body: %v\n%s", err, body)
			}
			_, code, param, _ := apiError(t, body)
			if code != tc.code || param != tc.param {
				t.Errorf("code, param = %q, %q; want %q, %q (%s)", code, param, tc.code, tc.param, body)
			}
		})
	}
}

// TestRealtimeBadEvents: malformed and unknown client events get an error
// event on the connection that sent them, and the connection stays usable.
func TestRealtimeBadEvents(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	ws, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "model=gpt-realtime")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	expect(t, ctx, ws, "session.created")
	for _, tc := range []struct{ event, code, param string }{
		{`{"type":`, "invalid_json", ""},
		{`{}`, "invalid_event", ""},
		{`{"type":"nope","event_id":"evt_1"}`, "invalid_value", "type"},
		{`{"type":"session.update"}`, "missing_required_parameter", "session"},
		{`{"type":"session.update","session":{"type":"realtime","output_modalities":["text","audio"]}}`, "invalid_value", "session.output_modalities"},
		{`{"type":"conversation.item.create","item":{"type":"function_call_output"}}`, "missing_required_parameter", "item.call_id"},
		{`{"type":"conversation.item.create","item":{"type":"message","role":"robot"}}`, "invalid_value", "item.role"},
		{`{"type":"input_audio_buffer.append","audio":"not base64!"}`, "invalid_value", "audio"},
		{`{"type":"input_audio_buffer.commit"}`, "input_audio_buffer_commit_empty", ""},
		{`{"type":"response.cancel"}`, "response_cancel_not_active", ""},
		{`{"type":"conversation.item.delete","item_id":"item_nope"}`, "item_not_found", "item_id"},
		{`{"type":"output_audio_buffer.clear"}`, "invalid_value", "type"},
		{`{"type":"response.create","response":"now"}`, "invalid_type", "response"},
	} {
		if err := ws.SendRaw([]byte(tc.event)); err != nil {
			t.Fatal(err)
		}
		e := expectEvent(t, ctx, ws, "error")
		m := e.Map()["error"].(map[string]any)
		code, _ := m["code"].(string)
		param, _ := m["param"].(string)
		if code != tc.code || param != tc.param {
			t.Errorf("%s: code, param = %q, %q; want %q, %q", tc.event, code, param, tc.code, tc.param)
		}
	}
	// Still open: a good event is answered.
	if err := ws.Send(map[string]any{"type": "input_audio_buffer.clear"}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "input_audio_buffer.cleared")
}
