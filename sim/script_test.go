package sim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

type gotCall struct{ name, args string }

// complete sends a non-streaming request and returns the reply's text,
// calls and finish reason.
func complete(t *testing.T, url, body string) (string, []gotCall, string) {
	t.Helper()
	resp, b := post(t, url, simtest.TestKey, body)
	if resp.StatusCode != 200 {
		t.Fatalf("status: got %d %s, want 200", resp.StatusCode, b)
	}
	var c struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content   *string
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	m := c.Choices[0].Message
	var calls []gotCall
	for _, tc := range m.ToolCalls {
		calls = append(calls, gotCall{tc.Function.Name, tc.Function.Arguments})
	}
	text := ""
	if m.Content != nil {
		text = *m.Content
	}
	return text, calls, c.Choices[0].FinishReason
}

// TestDefaultScript checks the built-in behaviour picks sensible tools and
// arguments for the demo domain, and honours tool_choice.
func TestDefaultScript(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	after := `{"model":"m",` + demoTools + `,"messages":[{"role":"user","content":"find me a pasta recipe"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_recipes","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":%s}]%s}`
	tests := []struct {
		name       string
		body       string
		wantCalls  []gotCall
		wantText   string // substring
		wantFinish string
	}{
		{name: "pasta recipe", body: chatBody("m", "find me a pasta recipe", demoTools),
			wantCalls: []gotCall{{"search_recipes", `{"query":"pasta"}`}}, wantFinish: "tool_calls"},
		{name: "oatmeal breakfast", body: chatBody("m", "I had oatmeal for breakfast", demoTools),
			wantCalls: []gotCall{{"log_meal", `{"description":"oatmeal","meal_type":"breakfast"}`}}, wantFinish: "tool_calls"},
		{name: "number from message", body: chatBody("m", "show me 5 soup recipes", demoTools),
			wantCalls: []gotCall{{"search_recipes", `{"max_results":5,"query":"soup"}`}}, wantFinish: "tool_calls"},
		{name: "workout", body: chatBody("m", "suggest a workout for strength", demoTools),
			wantCalls: []gotCall{{"recommend_workouts", `{}`}}, wantFinish: "tool_calls"},
		{name: "allergies", body: chatBody("m", "what are my allergies?", demoTools),
			wantCalls: []gotCall{{"get_profile", `{}`}}, wantFinish: "tool_calls"},
		{name: "no matching tool answers in text", body: chatBody("m", "hello there", demoTools),
			wantText: "voxgate simulator", wantFinish: "stop"},
		{name: "required calls a tool anyway", body: chatBody("m", "hello there", demoTools+`,"tool_choice":"required"`),
			wantCalls: []gotCall{{"get_profile", `{}`}}, wantFinish: "tool_calls"},
		{name: "none never calls", body: chatBody("m", "find me a pasta recipe", demoTools+`,"tool_choice":"none"`),
			wantText: "voxgate simulator", wantFinish: "stop"},
		{name: "named tool", body: chatBody("m", "I had oatmeal for breakfast", demoTools+`,"tool_choice":{"type":"function","function":{"name":"search_recipes"}}`),
			wantCalls: []gotCall{{"search_recipes", `{"query":"oatmeal breakfast"}`}}, wantFinish: "tool_calls"},
		{name: "text after tool result", body: sprintf(after, `"[{\"title\":\"Pasta\"}]"`, ""),
			wantText: "using search_recipes", wantFinish: "stop"},
		{name: "apology after tool error", body: sprintf(after, `"{\"error\":\"timeout\"}"`, ""),
			wantText: "didn't work", wantFinish: "stop"},
		{name: "no tools", body: chatBody("m", "find me a pasta recipe", ""),
			wantText: "voxgate simulator", wantFinish: "stop"},
		{name: "length", body: chatBody("m", "hello", `"max_tokens":3`),
			wantText: "Hi! I'm the ", wantFinish: "length"},
		{name: "length cuts arguments", body: chatBody("m", "find me a pasta recipe", demoTools+`,"max_completion_tokens":5`),
			wantCalls: []gotCall{{"search_recipes", `{"quer`}}, wantFinish: "length"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text, calls, finish := complete(t, url, tc.body)
			if !equalCalls(calls, tc.wantCalls) || finish != tc.wantFinish || !strings.Contains(text, tc.wantText) {
				t.Errorf("got text %q calls %v finish %q, want text containing %q calls %v finish %q",
					text, calls, finish, tc.wantText, tc.wantCalls, tc.wantFinish)
			}
		})
	}
}

func sprintf(format string, args ...any) string {
	// Only %s verbs: keep JSON braces literal.
	for _, a := range args {
		format = strings.Replace(format, "%s", a.(string), 1)
	}
	return format
}

func equalCalls(a, b []gotCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestScriptRules checks rule matching, order and tool_choice compatibility.
func TestScriptRules(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Text: "default", Rules: []sim.Rule{
		{Name: "model", When: sim.When{Model: "special"}, Reply: sim.Reply{Text: "special model"}},
		{Name: "answer", When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "results from {{tool_names}}"}},
		{Name: "weather", When: sim.When{Contains: []string{"WEATHER"}, ToolResults: &no, ToolsOffered: []string{"f"}},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "f", Arguments: map[string]any{"city": "Paris"}}, {Name: "f", Arguments: "not json"}}}},
		{Name: "echo", When: sim.When{Matches: `^echo (\w+)$`}, Reply: sim.Reply{Text: "you said: {{last_user}}"}},
		{Name: "long", When: sim.When{Contains: []string{"long"}}, Reply: sim.Reply{TextTokens: 3}},
	}}})
	tool := `"tools":[{"type":"function","function":{"name":"f"}}]`
	tests := []struct {
		name       string
		body       string
		wantText   string
		wantCalls  []gotCall
		wantFinish string
	}{
		{"model rule first", chatBody("special", "weather", tool), "special model", nil, "stop"},
		{"two calls", chatBody("m", "the weather?", tool), "", []gotCall{{"f", `{"city":"Paris"}`}, {"f", "not json"}}, "tool_calls"},
		{"parallel off keeps the first", chatBody("m", "the weather?", tool+`,"parallel_tool_calls":false`), "", []gotCall{{"f", `{"city":"Paris"}`}}, "tool_calls"},
		{"tool rule skipped when tool_choice none", chatBody("m", "the weather?", tool+`,"tool_choice":"none"`), "default", nil, "stop"},
		{"tool rule needs its tool offered", chatBody("m", "the weather?", ""), "default", nil, "stop"},
		{"regexp and placeholder", chatBody("m", "echo hi", ""), "you said: echo hi", nil, "stop"},
		{"filler", chatBody("m", "long", ""), "sim sim sim ", nil, "stop"},
		{"results", `{"model":"m",` + tool + `,"messages":[{"role":"user","content":"weather"},{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"1","content":"sunny"}]}`,
			"results from f", nil, "stop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text, calls, finish := complete(t, url, tc.body)
			if text != tc.wantText || !equalCalls(calls, tc.wantCalls) || finish != tc.wantFinish {
				t.Errorf("got %q %v %q, want %q %v %q", text, calls, finish, tc.wantText, tc.wantCalls, tc.wantFinish)
			}
		})
	}
}

// TestScriptSystemMatches checks that a rule can read the system prompt,
// as a model reads the page the app says the user is on, and use what it
// captured in its reply's text and arguments, escaped as JSON.
func TestScriptSystemMatches(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Text: "default", Rules: []sim.Rule{
		{Name: "this client", When: sim.When{Contains: []string{"this client"}, SystemMatches: `"client_id":\s*(\d+).*"name":"([^"]*)"`},
			Reply: sim.Reply{Text: "Client {{system.2}}.", ToolCalls: []sim.ScriptCall{
				{Name: "get_client", Arguments: `{"id": {{system.1}}}`},
				{Name: "note", Arguments: map[string]any{"about": "{{system.2}}"}}}}},
	}}})
	tools := `"tools":[{"type":"function","function":{"name":"get_client"}},{"type":"function","function":{"name":"note"}}]`
	withSystem := func(system string) string {
		b, _ := json.Marshal(system)
		return `{"model":"m",` + tools + `,"messages":[{"role":"system","content":` + string(b) + `},{"role":"user","content":"Show this client"}]}`
	}
	tests := []struct {
		name      string
		body      string
		wantText  string
		wantCalls []gotCall
	}{
		{"client 7", withSystem(`Page: {"client_id": 7, "name":"Ana"}`), "Client Ana.",
			[]gotCall{{"get_client", `{"id": 7}`}, {"note", `{"about":"Ana"}`}}},
		{"client 42, a quote escaped", withSystem(`Page: {"client_id":42,"name":"Ana \"Q"}`), `Client Ana \.`,
			[]gotCall{{"get_client", `{"id": 42}`}, {"note", `{"about":"Ana \\"}`}}},
		// No match: the default behaviour picks a tool and reads no id.
		{"no page: no match", withSystem("No page."), "", []gotCall{{"get_client", "{}"}}},
		{"a user message is not the system prompt", chatBody("m", `this client {"client_id": 7, "name":"Ana"}`, tools), "", []gotCall{{"get_client", "{}"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text, calls, _ := complete(t, url, tc.body)
			if text != tc.wantText || !equalCalls(calls, tc.wantCalls) {
				t.Errorf("got %q %v, want %q %v", text, calls, tc.wantText, tc.wantCalls)
			}
		})
	}
}

// TestPromptTokens checks the documented token arithmetic exactly.
func TestPromptTokens(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Rules: []sim.Rule{{Reply: sim.Reply{Text: "12345"}}}}})
	// Counted: "sys" 3 + "hé" 3 + "a" 1 + "b" 1 (text parts) + "f" 1 + `{"x":1}` 7
	// + tool "f" 1 + "desc" 4 + `{"type":"object"}` 17 + "ok" 2 = 40 bytes -> 10 tokens.
	body := `{"model":"m","messages":[
		{"role":"system","content":"sys"},
		{"role":"user","name":"ignored","content":"hé"},
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"http://x"}},{"type":"text","text":"b"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_ignored","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
		{"role":"tool","tool_call_id":"call_ignored","content":"ok"}],
		"tools":[{"type":"function","function":{"name":"f","description":"desc","parameters":{ "type" : "object" }}}]}`
	resp, b := post(t, url, simtest.TestKey, body)
	var c struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
		}
	}
	if err := json.Unmarshal(b, &c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %d %s: %v", resp.StatusCode, b, err)
	}
	if u := c.Usage; u.PromptTokens != 10 || u.CompletionTokens != 2 || u.TotalTokens != 12 {
		t.Errorf("usage: got %+v, want 10 + 2 = 12", u)
	}
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{"full", `
keys: [sk-a]
models: [gpt-4o]
latency: {ttft: 10ms, tokens_per_second: 100, chunk_tokens: 2}
max_body_bytes: 4096
seed: 7
script:
  text: hello
  rules:
    - name: pasta
      when: {contains: [pasta], tools_offered: [search_recipes], tool_results: false}
      reply:
        tool_calls:
          - name: search_recipes
            arguments: {query: pasta}
faults:
  - {endpoint: /v1/chat/completions, kind: rate_limit, count: 2}
`, ""},
		{"empty", ``, ""},
		{"json", `{"script":{"text":"hi"}}`, ""},
		{"unknown key", "latency: {ttft: 1s, tps: 3}\n", "field tps not found"},
		{"bad duration", "latency: {ttft: soon}\n", "soon"},
		{"bad regexp", "script: {rules: [{when: {matches: '('}, reply: {text: x}}]}\n", "matches"},
		{"empty reply", "script: {rules: [{when: {contains: [x]}}]}\n", "reply"},
		{"bad fault", "faults: [{kind: rate_limit, fraction: 3}]\n", "fraction"},
		{"negative latency", "latency: {ttft: -1s}\n", "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "sim.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := sim.LoadConfig(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if _, err := sim.New(cfg); err != nil {
				t.Fatalf("New: %v", err)
			}
		})
	}
}

func TestLoadConfigValues(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(path, []byte("latency: {ttft: 10ms, tokens_per_second: 100}\nkeys: [sk-a]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := sim.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Latency == nil || cfg.Latency.TTFT.Milliseconds() != 10 || cfg.Latency.TokensPerSecond != 100 || len(cfg.Keys) != 1 {
		t.Errorf("got %+v latency %+v", cfg, cfg.Latency)
	}
}
