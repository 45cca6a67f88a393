package sim_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestLiveCreateRefusals: the config is strict and every refusal comes in
// the API's error shape, with the parameter's path.
func TestLiveCreateRefusals(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{})
	ctx := testCtx(t)
	offer, err := simtest.NewCaller(t).Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sdp, _ := json.Marshal(offer)
	body := func(session string) string {
		return `{"session":` + session + `,"transport":{"type":"webrtc","sdp":` + string(sdp) + `}}`
	}
	cases := []struct {
		name, body, key   string
		status            int
		code, param, mesg string
	}{
		{name: "unknown session field", body: body(`{"model":"gpt-live-1","voice":"marin"}`),
			status: 400, code: "unknown_parameter", param: "session.voice"},
		{name: "audio format on WebRTC", body: body(`{"model":"gpt-live-1","audio":{"format":{"type":"audio/pcm"}}}`),
			status: 400, code: "unknown_parameter", param: "session.audio.format"},
		{name: "unknown top-level field", body: `{"session":{"model":"gpt-live-1"},"transport":{"sdp":"x"},"extra":1}`,
			status: 400, code: "unknown_parameter", param: "extra"},
		{name: "missing model", body: body(`{"instructions":"hi"}`), status: 400, code: "missing_required_parameter", param: "session.model"},
		{name: "missing session", body: `{"transport":{"type":"webrtc","sdp":` + string(sdp) + `}}`,
			status: 400, code: "missing_required_parameter", param: "session"},
		{name: "missing sdp", body: `{"session":{"model":"gpt-live-1"},"transport":{"type":"webrtc"}}`,
			status: 400, code: "missing_required_parameter", param: "transport.sdp"},
		{name: "not an offer", body: `{"session":{"model":"gpt-live-1"},"transport":{"type":"webrtc","sdp":"hello"}}`,
			status: 400, code: "invalid_offer", param: "transport.sdp"},
		{name: "instructions not a string", body: body(`{"model":"gpt-live-1","instructions":5}`),
			status: 400, code: "invalid_type", param: "session.instructions"},
		{name: "negative acknowledgement delay", body: body(`{"model":"gpt-live-1","delegation":{"type":"client","acknowledgement_delay_ms":-1}}`),
			status: 400, code: "invalid_value", param: "session.delegation.acknowledgement_delay_ms"},
		{name: "responses delegation", body: body(`{"model":"gpt-live-1","delegation":{"type":"responses","responses":{}}}`),
			status: 400, code: "unsupported_parameter", param: "session.delegation.type"},
		{name: "unknown client event in the allowlist", body: body(`{"model":"gpt-live-1","client":{"data_channel":{"allowed_client_events":["session.hack"]}}}`),
			status: 400, code: "invalid_value", param: "session.client.data_channel.allowed_client_events[0]"},
		{name: "client without data_channel", body: body(`{"model":"gpt-live-1","client":{}}`),
			status: 400, code: "missing_required_parameter", param: "session.client.data_channel"},
		{name: "not JSON", body: `{"session":`, status: 400},
		{name: "client secret", body: body(`{"model":"gpt-live-1"}`), key: "ek_abc", status: 401, code: "invalid_api_key"},
	}
	for _, tc := range cases {
		key := tc.key
		if key == "" {
			key = simtest.TestKey
		}
		resp, b := do(t, http.MethodPost, base+"/v1/live/sessions", key, "application/json", []byte(tc.body))
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, resp.StatusCode, tc.status, b)
			continue
		}
		typ, code, param, msg := apiError(t, b)
		if typ == "" || msg == "" || code != tc.code || param != tc.param {
			t.Errorf("%s: got type %q code %q param %q (%s); want code %q param %q", tc.name, typ, code, param, msg, tc.code, tc.param)
		}
	}
	if n := len(s.LiveSessions()); n != 0 {
		t.Errorf("%d sessions created by refused requests", n)
	}
}

// TestLiveCreateFaults: create faults reach openai-go as the API's errors.
func TestLiveCreateFaults(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{})
	ctx := testCtx(t)
	offer, err := simtest.NewCaller(t).Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := simtest.Client(base)
	for _, tc := range []struct {
		kind   sim.FaultKind
		status int
	}{{sim.FaultRateLimit, 429}, {sim.FaultServerError, 500}, {sim.FaultUnavailable, 503}, {sim.FaultSDPReject, 400}} {
		if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: tc.kind, RetryAfter: 2}); err != nil {
			t.Fatal(err)
		}
		_, err := client.Live.New(ctx, liveParams(offer, 0))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
			t.Errorf("%s: got %v, want status %d", tc.kind, err, tc.status)
			continue
		}
		if tc.kind == sim.FaultRateLimit && apiErr.Response.Header.Get("Retry-After") != "2" {
			t.Errorf("rate_limit: retry-after %q", apiErr.Response.Header.Get("Retry-After"))
		}
		if tc.kind == sim.FaultSDPReject && (apiErr.Code != "invalid_offer" || !strings.Contains(apiErr.Param, "sdp")) {
			t.Errorf("sdp_reject: code %q param %q", apiErr.Code, apiErr.Param)
		}
	}
	if got := s.Stats().Endpoints[sim.EndpointLiveSessions].FaultsServed; got != 4 {
		t.Errorf("faults served %d, want 4", got)
	}
}
