package sim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// A browser's direct-mode call: the preflight of POST /v1/realtime/calls
// allows the page's origin, its Authorization and Content-Type (and the
// header OpenAI's own browser SDK adds, X-OpenAI-Agents-SDK), and the
// call's answer (a refusal here) is readable from that origin too. Other
// routes do not answer preflights.
func TestRealtimeCallsAllowBrowsers(t *testing.T) {
	t.Parallel()
	_, base := testkit.NewSim(t, sim.Config{})
	do := func(method, path string, h map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(""))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	pre := do("OPTIONS", "/v1/realtime/calls", map[string]string{"Origin": "http://127.0.0.1:9",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"})
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Authorization") || pre.Header.Get("Access-Control-Allow-Methods") != "POST" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "X-OpenAI-Agents-SDK") {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	refused := do("POST", "/v1/realtime/calls", map[string]string{"Origin": "http://127.0.0.1:9", "Content-Type": "application/sdp", "Authorization": "Bearer ek_wrong"})
	if refused.StatusCode != http.StatusUnauthorized || refused.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("refused call: %d, allow-origin %q", refused.StatusCode, refused.Header.Get("Access-Control-Allow-Origin"))
	}
	if other := do("OPTIONS", "/v1/chat/completions", nil); other.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("chat completions answer a preflight: %v", other.Header)
	}
}
