package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// recipeSession is the session config the Realtime tests use.
const (
	testInstructions = "Be brief."
	recipeToolJSON   = `{"type":"function","name":"search_recipes","description":"Search recipes by keyword","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}`
	recipeSession    = `{"type":"realtime","model":"gpt-realtime","instructions":"` + testInstructions + `","tools":[` + recipeToolJSON + `]}`
)

// newRealtimeSim starts a simulator with short spoken replies.
func newRealtimeSim(t *testing.T, rt sim.Realtime) (*sim.Server, string) {
	t.Helper()
	if rt.ReplyAudioMS == 0 {
		rt.ReplyAudioMS = 200
	}
	if rt.GenerationMS == 0 {
		rt.GenerationMS = 100 // long enough for a response.cancel sent at once to find it generating
	}
	return testkit.NewSim(t, sim.Config{Realtime: rt})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mint creates a client secret for session and returns its value.
func mint(t *testing.T, base, session string, seconds int) string {
	t.Helper()
	body := `{"expires_after":{"anchor":"created_at","seconds":` + itoa(seconds) + `},"session":` + session + `}`
	resp, b := do(t, http.MethodPost, base+"/v1/realtime/client_secrets", simtest.TestKey, "application/json", []byte(body))
	if resp.StatusCode != 200 {
		t.Fatalf("mint: %d %s", resp.StatusCode, b)
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(b, &out); err != nil || !strings.HasPrefix(out.Value, "ek_") {
		t.Fatalf("mint: got %s (%v)", b, err)
	}
	return out.Value
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// do sends one request and returns the response and its body.
func do(t *testing.T, method, url, key, ctype string, body []byte) (*http.Response, []byte) {
	t.Helper()
	return doHeader(t, method, url, key, ctype, body, nil)
}

// doHeader is do with extra request headers.
func doHeader(t *testing.T, method, url, key, ctype string, body []byte, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// expect reads events until typ, failing the test on error.
func expect(t *testing.T, ctx context.Context, s simtest.EventStream, typ string) (simtest.Event, []simtest.Event) {
	t.Helper()
	e, seen, err := simtest.Until(ctx, s, typ)
	if err != nil {
		types := make([]string, 0, len(seen))
		for _, e := range seen {
			types = append(types, e.Type)
		}
		t.Fatalf("waiting for %s: %v (saw %v)", typ, err, types)
	}
	return e, seen
}

// dialCall creates a call in the given variant and waits for oai-events.
func dialCall(t *testing.T, ctx context.Context, base, variant string) (*simtest.Caller, string) {
	t.Helper()
	c := simtest.NewCaller(t)
	var id string
	var err error
	switch variant {
	case "sdp+ephemeral":
		id, err = c.Dial(ctx, base, mint(t, base, recipeSession, 60))
	case "multipart+apikey":
		id, err = c.DialMultipart(ctx, base, simtest.TestKey, recipeSession)
	default:
		t.Fatalf("unknown variant %q", variant)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "rtc_u1_") {
		t.Fatalf("call id = %q, want rtc_u1_…", id)
	}
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	return c, id
}

// usageOf decodes response.done's usage.
type usageOf struct {
	Response struct {
		Status string `json:"status"`
		Output []struct {
			Type      string `json:"type"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
			Content   []struct {
				Transcript string `json:"transcript"`
			} `json:"content"`
		} `json:"output"`
		Usage struct {
			TotalTokens       int `json:"total_tokens"`
			InputTokens       int `json:"input_tokens"`
			OutputTokens      int `json:"output_tokens"`
			InputTokenDetails struct {
				TextTokens          int `json:"text_tokens"`
				AudioTokens         int `json:"audio_tokens"`
				CachedTokens        int `json:"cached_tokens"`
				CachedTokensDetails struct {
					TextTokens  int `json:"text_tokens"`
					AudioTokens int `json:"audio_tokens"`
				} `json:"cached_tokens_details"`
			} `json:"input_token_details"`
			OutputTokenDetails struct {
				TextTokens  int `json:"text_tokens"`
				AudioTokens int `json:"audio_tokens"`
			} `json:"output_token_details"`
		} `json:"usage"`
	} `json:"response"`
}

func decodeDone(t *testing.T, e simtest.Event) usageOf {
	t.Helper()
	var u usageOf
	if err := json.Unmarshal(e.Raw, &u); err != nil {
		t.Fatalf("decode response.done: %v", err)
	}
	return u
}

// wantUsage is the usage DESIGN §14 predicts.
type wantUsage struct{ inText, inAudio, cachedText, cachedAudio, outText, outAudio int }

func checkUsage(t *testing.T, got usageOf, want wantUsage) {
	t.Helper()
	u := got.Response.Usage
	d := u.InputTokenDetails
	have := wantUsage{d.TextTokens, d.AudioTokens, d.CachedTokensDetails.TextTokens, d.CachedTokensDetails.AudioTokens,
		u.OutputTokenDetails.TextTokens, u.OutputTokenDetails.AudioTokens}
	if have != want {
		t.Errorf("usage = %+v, want %+v", have, want)
	}
	if u.InputTokens != want.inText+want.inAudio || u.OutputTokens != want.outText+want.outAudio ||
		u.TotalTokens != u.InputTokens+u.OutputTokens || d.CachedTokens != want.cachedText+want.cachedAudio {
		t.Errorf("usage totals inconsistent: %+v", u)
	}
}

// ceil4 is the text-token rule: ceil(bytes / 4).
func ceil4(n int) int { return (n + 3) / 4 }

// recipeBaseBytes is the bytes of instructions and tools that every
// response's input re-counts.
func recipeBaseBytes() int {
	var tool struct {
		Name, Description string
		Parameters        json.RawMessage
	}
	_ = json.Unmarshal([]byte(recipeToolJSON), &tool)
	var b bytes.Buffer
	_ = json.Compact(&b, tool.Parameters)
	return len(testInstructions) + len(tool.Name) + len(tool.Description) + b.Len()
}

// newHTTPServer serves s on loopback without closing s at cleanup, for
// tests that close the simulator themselves.
func newHTTPServer(t *testing.T, s *sim.Server) string {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = s.Close() })
	return ts.URL
}

// dialModelSocket opens a ?model= WebSocket session, closed at cleanup.
func dialModelSocket(t *testing.T, base string) *simtest.Socket {
	t.Helper()
	ws, _, err := simtest.DialSocket(testCtx(t), base, simtest.TestKey, "model=gpt-realtime")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Close)
	return ws
}

// jsonValue decodes a JSON literal.
func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// eventOf returns the first event of type typ.
func eventOf(t *testing.T, events []simtest.Event, typ string) simtest.Event {
	t.Helper()
	for _, e := range events {
		if e.Type == typ {
			return e
		}
	}
	t.Fatalf("no %s among %v", typ, types(events))
	return simtest.Event{}
}

func indexOf(events []simtest.Event, e simtest.Event) int {
	for i := range events {
		if string(events[i].Raw) == string(e.Raw) {
			return i
		}
	}
	return -1
}

func types(events []simtest.Event) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

// itemID is the id of an event's item.
func itemID(e simtest.Event) string {
	it, _ := e.Map()["item"].(map[string]any)
	id, _ := it["id"].(string)
	return id
}

// errorCode is the code of an error event.
func errorCode(e simtest.Event) string {
	m, _ := e.Map()["error"].(map[string]any)
	code, _ := m["code"].(string)
	return code
}

// assertAPIError checks an HTTP error answer: status, code, param, and the
// body against the spec's ErrorResponse.
func assertAPIError(t *testing.T, spec *sim.Spec, what string, resp *http.Response, body []byte, status int, code, param string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s: status %d, want %d: %s", what, resp.StatusCode, status, body)
		return
	}
	if err := spec.Validate("ErrorResponse", body); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	if _, gotCode, gotParam, _ := apiError(t, body); gotCode != code || gotParam != param {
		t.Errorf("%s: code, param = %q, %q; want %q, %q", what, gotCode, gotParam, code, param)
	}
}

// onSideband waits until a sideband socket has joined its call: a sideband
// gets no session.created, so it sends a session.update and waits for its
// session.updated, as a gateway re-asserting its config would.
func onSideband(t *testing.T, ctx context.Context, sb *simtest.Socket) {
	t.Helper()
	if err := sb.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, sb, "session.updated")
}
