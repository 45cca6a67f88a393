package sim_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeUnknownFields: properties the GA schemas do not define (the
// beta shapes among them) are refused with unknown_parameter naming the
// path, over HTTP and in client events; the GA shapes pass.
func TestRealtimeUnknownFields(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	_, base := newRealtimeSim(t, sim.Realtime{})
	secrets := base + "/v1/realtime/client_secrets"
	sdp, err := simtest.NewCaller(t).Offer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, body, param string }{
		{"top level", `{"foo":1}`, "foo"},
		{"expires_after", `{"expires_after":{"anchor":"created_at","seconds":60,"unit":"s"}}`, "expires_after.unit"},
		{"beta modalities", `{"session":{"type":"realtime","modalities":["audio"]}}`, "session.modalities"},
		{"beta voice", `{"session":{"type":"realtime","voice":"marin"}}`, "session.voice"},
		{"nested", `{"session":{"type":"realtime","audio":{"input":{"turn_detection":{"type":"server_vad","silence_ms":300}}}}}`, "session.audio.input.turn_detection.silence_ms"},
		{"tool", `{"session":{"type":"realtime","tools":[` + recipeToolJSON + `,{"type":"function","name":"x","strict":true}]}}`, "session.tools[1].strict"},
		{"server's own field", `{"session":{"type":"realtime","id":"sess_1"}}`, "session.id"},
	} {
		resp, body := do(t, http.MethodPost, secrets, simtest.TestKey, "application/json", []byte(tc.body))
		assertAPIError(t, spec, "mint "+tc.name, resp, body, 400, "unknown_parameter", tc.param)
	}
	form, ctype := simtest.CallForm(sdp, `{"type":"realtime","input_audio_format":"pcm16"}`)
	resp, body := do(t, http.MethodPost, base+"/v1/realtime/calls", simtest.TestKey, ctype, form)
	assertAPIError(t, spec, "call session", resp, body, 400, "unknown_parameter", "session.input_audio_format")

	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	for _, tc := range []struct {
		event map[string]any
		param string
	}{
		{map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "turn_detection": nil}}, "session.turn_detection"},
		{map[string]any{"type": "response.create", "response": map[string]any{"modalities": []any{"text"}}}, "response.modalities"},
		{map[string]any{"type": "response.create", "response": map[string]any{"audio": map[string]any{"output": map[string]any{"speed": 1}}}}, "response.audio.output.speed"},
	} {
		if err := ws.Send(tc.event); err != nil {
			t.Fatal(err)
		}
		e := expectEvent(t, ctx, ws, "error")
		checkOpenAIDecode(t, e)
		m := e.Map()["error"].(map[string]any)
		if m["code"] != "unknown_parameter" || m["param"] != tc.param {
			t.Errorf("%v: error %v, want unknown_parameter %s", tc.event, m, tc.param)
		}
	}
	// The GA shape of everything refused above is accepted.
	ga := map[string]any{"type": "realtime", "output_modalities": []any{"audio"}, "truncation": map[string]any{"type": "retention_ratio", "retention_ratio": 0.5},
		"tracing": map[string]any{"workflow_name": "w"}, "audio": map[string]any{
			"input":  map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": 24000}, "turn_detection": map[string]any{"type": "server_vad", "silence_duration_ms": 300}},
			"output": map[string]any{"voice": "marin", "speed": 1.1}}}
	if err := ws.Send(map[string]any{"type": "session.update", "session": ga}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")
	if err := ws.Send(map[string]any{"type": "response.create", "response": map[string]any{"output_modalities": []any{"text"},
		"audio": map[string]any{"output": map[string]any{"voice": "marin"}}, "metadata": map[string]any{"any": "key"}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "response.done")
}

// TestRealtimeBetaHeader: OpenAI-Beta: realtime=v1 is refused with
// beta_api_shape_disabled: 400 over HTTP; on a socket an error event, then
// a close with code 4000.
func TestRealtimeBetaHeader(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	_, base := newRealtimeSim(t, sim.Realtime{})
	beta := http.Header{"Openai-Beta": {"realtime=v1"}}
	resp, body := doHeader(t, http.MethodPost, base+"/v1/realtime/client_secrets", simtest.TestKey, "application/json", []byte(`{}`), beta)
	assertAPIError(t, spec, "mint", resp, body, 400, "beta_api_shape_disabled", "")
	resp, body = doHeader(t, http.MethodPost, base+"/v1/realtime/calls", simtest.TestKey, "application/sdp", []byte("v=0"), beta)
	assertAPIError(t, spec, "call", resp, body, 400, "beta_api_shape_disabled", "")

	ctx := testCtx(t)
	h := http.Header{"Authorization": {"Bearer " + simtest.TestKey}, "Openai-Beta": {"realtime=v1"}}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, "ws"+base[len("http"):]+"/v1/realtime?model=gpt-realtime", h)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	e := simtest.Event{Type: "error", Raw: data}
	if code := errorCode(e); code != "beta_api_shape_disabled" {
		t.Errorf("first event %s, want the beta_api_shape_disabled error", data)
	}
	if err := spec.Validate("RealtimeServerEventError", data); err != nil {
		t.Error(err)
	}
	checkOpenAIDecode(t, e)
	_, _, err = conn.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4000 {
		t.Errorf("socket ended with %v, want close code 4000", err)
	}
}
