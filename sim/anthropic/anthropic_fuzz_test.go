package anthropic

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/voxgate/voxgate/sim/openai"
)

// FuzzDecodeMessagesRequest feeds arbitrary bodies to the Messages
// decoder and, when it accepts one, through the script and both
// renderings: refusals are 400s in Anthropic's shape, accepted requests
// render valid JSON events whose usage classes add up to the prompt.
func FuzzDecodeMessagesRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"claude-haiku-5-5","max_tokens":10,"messages":[{"role":"user","content":"find me a pasta recipe"}]}`,
		`{"model":"m","max_tokens":5,"stream":true,"system":[{"type":"text","text":"be kind","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		`{"model":"m","max_tokens":1,"tools":[{"name":"log_meal","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},"messages":[{"role":"user","content":"I had eggs"}]}`,
		`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"ok"}]}]}`,
		`{"model":"m","max_tokens":9,"messages":[{"role":"system","content":"x"}]}`,
		`{"model":"claude-haiku-4-5","max_tokens":9,"output_config":{"format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false,"required":["a"],"properties":{"a":{"type":"array","items":{"$ref":"#/$defs/x"}}},"$defs":{"x":{"type":"string","enum":["p","q"]}}}}},"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":9,"output_config":{"format":{"type":"json_schema","schema":{"$ref":"#/$defs/n","$defs":{"n":{"anyOf":[{"$ref":"#/$defs/n"}]}}}}},"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":"hi"}`, `{"model":`, `[]`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	script, err := openai.CompileScript(openai.Script{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeMessagesRequest(body)
		if err != nil {
			var ae *anthError
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Type != "invalid_request_error" {
				t.Fatalf("got error %v, want a 400 invalid_request_error", err)
			}
			if !json.Valid(ae.body("req_x")) {
				t.Fatal("error body is not JSON")
			}
			return
		}
		chat := req.chat()
		p := openai.PromptTokens{Bytes: openai.PromptBytes(chat)}
		a := newAnthAnswer(openai.NewCompletion(chat, script.Plan(chat), req.Model, p), p)
		if a.input+a.read+a.write != openai.TokensFor(p.Bytes) {
			t.Fatalf("usage classes %d+%d+%d, prompt %d", a.input, a.read, a.write, openai.TokensFor(p.Bytes))
		}
		if !json.Valid(a.message(false)) {
			t.Fatalf("message is not JSON: %s", a.message(false))
		}
		for st := range a.steps(16) {
			if b, err := json.Marshal(st.data); err != nil || !json.Valid(b) {
				t.Fatalf("event %s: %v", st.name, err)
			}
		}
	})
}
