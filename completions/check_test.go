package completions_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/completions"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestCompletionRefusals: what a client got wrong is a 400 in OpenAI's
// shape, naming the field as param, before anything is admitted or sent:
// fields voxgate would not act on, values outside the spec's enums and
// bounds, and a conversation no provider would take.
func TestCompletionRefusals(t *testing.T) {
	t.Parallel()
	const user = `{"role":"user","content":"hi"}`
	call := func(id string) string {
		return `{"role":"assistant","content":null,"tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	}
	answer := func(id string) string { return `{"role":"tool","tool_call_id":"` + id + `","content":"ok"}` }
	body := func(extra string, msgs ...string) string {
		return `{"model":"d",` + extra + `"tools":[{"type":"function","function":{"name":"f"}}],"messages":[` + strings.Join(msgs, ",") + `]}`
	}
	for _, tc := range []struct{ name, body, param, says string }{
		{"metadata of numbers", body(`"metadata":{"a":1},`, user), "metadata.a", "an object of at most 16 string values (keys up to 64 characters, values up to 512)"},
		{"metadata not an object", body(`"metadata":"x",`, user), "metadata", "an object of at most 16 string values"},
		{"metadata of 17 pairs", body(`"metadata":{`+pairs(17)+`},`, user), "metadata", "got 17"},
		{"a metadata key too long", body(`"metadata":{"`+strings.Repeat("k", 65)+`":"v"},`, user), "metadata", "a key has 65 characters"},
		{"a metadata value too long", body(`"metadata":{"k":"`+strings.Repeat("v", 513)+`"},`, user), "metadata.k", "513 characters"},
		{"store: true", body(`"store":true,`, user), "store", "never asks a provider to store"},
		{"reasoning effort outside the enum", body(`"reasoning_effort":"ultra",`, user), "reasoning_effort", `"ultra" is not one of none, minimal, low, medium, high, xhigh, max`},
		{"a tool message answering nothing", body("", user, answer("nope")), "messages[1].tool_call_id", `"nope" answers no tool call`},
		{"a tool message after another turn", body("", user, call("c1"), answer("c1"), user, answer("c1")), "messages[4].tool_call_id", "answers no tool call"},
		{"a call left unanswered", body("", user, call("c1"), user), "messages[1].tool_calls", `call "c1" has no tool message`},
		{"a call unanswered at the end", body("", user, call("c1")), "messages[1].tool_calls", `call "c1"`},
		{"a call id twice", body("", user, `{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}},{"id":"c","function":{"name":"f","arguments":"{}"}}]}`, answer("c")), "messages[1].tool_calls[1].id", "used twice"},
		{"a user message without content", body("", `{"role":"user"}`), "messages[0].content", "required on a user message"},
		{"a user message of null", body("", `{"role":"user","content":null}`), "messages[0].content", "required"},
		{"a user message of nothing", body("", `{"role":"user","content":"  "}`), "messages[0].content", "needs text"},
		{"a user message of no parts' text", body("", `{"role":"user","content":[{"type":"text","text":""}]}`), "messages[0].content", "needs text"},
		{"an assistant message of nothing", body("", user, `{"role":"assistant"}`), "messages[1].content", "content or tool_calls"},
		{"an unknown key in a text part", body("", `{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}`), "messages[0].content[0]", `unknown field "cache_control"`},
		{"an unknown key in tool_choice", body(`"tool_choice":{"type":"function","function":{"name":"f"},"allowed":true},`, user), "tool_choice", `unknown field "allowed"`},
		{"an unknown key in tool_choice.function", body(`"tool_choice":{"type":"function","function":{"name":"f","strict":true}},`, user), "tool_choice", `unknown field "strict"`},
		{"max_tokens zero", body(`"max_tokens":0,`, user), "max_tokens", "at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := completions.DecodeCompletionRequest([]byte(tc.body))
			if err == nil {
				_, err = req.LLMRequest()
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.InvalidRequest || e.Fields["param"] != tc.param ||
				e.Fields["type"] != "invalid_request_error" || !strings.Contains(e.Message, tc.says) {
				t.Fatalf("got %v %v, want INVALID_REQUEST, param %q, saying %q", err, fieldsOf(e), tc.param, tc.says)
			}
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"metadata of 16 strings", body(`"metadata":{`+pairs(16)+`},`, user)},
		{"metadata null", body(`"metadata":null,`, user)},
		{"store: false", body(`"store":false,`, user)},
		{"each reasoning effort", body(`"reasoning_effort":"xhigh",`, user)},
		{"a tool loop", body("", user, call("c1"), answer("c1"), `{"role":"assistant","content":"done"}`, user)},
		{"a tool message with empty content", body("", user, call("c1"), `{"role":"tool","tool_call_id":"c1","content":""}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := completions.DecodeCompletionRequest([]byte(tc.body))
			if err == nil {
				_, err = req.LLMRequest()
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// pairs is n metadata pairs.
func pairs(n int) string {
	var out []string
	for i := range n {
		out = append(out, `"k`+strings.Repeat("x", i)+`":"v"`)
	}
	return strings.Join(out, ",")
}

func fieldsOf(e *apierr.Error) map[string]any {
	if e == nil {
		return nil
	}
	return e.Fields
}

// TestCompletionStrictNoTargetHonours: a strict tool on a route whose only
// target is Gemini (no strict mode) is refused by name before admission,
// never sent without it; the same request without strict is answered.
func TestCompletionStrictNoTargetHonours(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{})
	gem, err := gemini.New(t.Context(), gemini.Params{Name: "gemini", BaseURL: url, APIKey: simtest.TestKey})
	if err != nil {
		t.Fatal(err)
	}
	router, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"gemini": gem},
		Routes: []llm.Route{{Name: "g", Targets: []llm.Target{{Provider: "gemini", Model: "gemini-3.8-flash"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{sim: s, simURL: url, provider: func(llm.Provider) llm.Provider { return router },
		moreModels: []string{"gemini-3.8-flash"}})
	h := httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return f.svc.HandleCompletions(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{UserID: "u-strict"})))
	})
	ask := func(strict bool) (int, map[string]any) {
		body := fmt.Sprintf(`{"model":"g","messages":[{"role":"user","content":"hi"}],
			"tools":[{"type":"function","function":{"name":"f","strict":%t,"parameters":{"type":"object"}}}]}`, strict)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	code, out := ask(true)
	e, _ := out["error"].(map[string]any)
	if code != http.StatusBadRequest || e["param"] != "tools[0].function.strict" || !strings.Contains(fmt.Sprint(e["message"]), `no target of "g" can honour it`) {
		t.Fatalf("strict on a Gemini route: %d %v", code, out)
	}
	if n := s.Stats().Endpoints[sim.EndpointGeminiStream].Requests; n != 0 {
		t.Errorf("the provider saw %d requests", n)
	}
	if code, out := ask(false); code != http.StatusOK {
		t.Fatalf("without strict: %d %v", code, out)
	}
	if n := s.Stats().Endpoints[sim.EndpointGeminiStream].Requests; n != 1 {
		t.Errorf("the provider saw %d requests, want the one without strict", n)
	}
}
