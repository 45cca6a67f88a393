package sim

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/voxgate/voxgate/sim/core"
)

// FuzzDecodeChatRequest feeds arbitrary bodies to the request decoder and,
// when it accepts one, through the script and both renderings. Refusals
// must be 400 APIErrors; accepted requests must render valid JSON.
func FuzzDecodeChatRequest(f *testing.F) {
	seeds := []string{
		`{"model":"gpt-4o","messages":[{"role":"user","content":"find me a pasta recipe"}]}`,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		`{"model":"m","tools":[{"type":"function","function":{"name":"log_meal","parameters":{"type":"object","properties":{"meal_type":{"enum":["breakfast"]},"n":{"type":"integer","minimum":2}},"required":["meal_type","n"]}}}],"tool_choice":"required","messages":[{"role":"user","content":"I had 3 eggs"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"1","content":"ok"}],"max_tokens":1}`,
		`{"model":"m","messages":"hi"}`,
		`{"model":`,
		`[]`,
		``,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	script, err := compileScript(Script{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeChatRequest(body)
		if err != nil {
			var apiErr *core.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != 400 {
				t.Fatalf("got error %v, want a 400 APIError", err)
			}
			if b, _ := apiErr.MarshalJSON(); !json.Valid(b) {
				t.Fatalf("error body %q is not JSON", b)
			}
			return
		}
		if req.Model == "" || len(req.msgs) == 0 {
			t.Fatalf("accepted a request without model or messages: %q", body)
		}
		c := newCompletion(req, script.plan(req), req.Model, promptTokens{bytes: promptBytes(req)})
		if b := c.marshal(); !json.Valid(b) {
			t.Fatalf("completion %q is not JSON", b)
		}
		if max := req.maxCompletion(); max > 0 && c.usage.CompletionTokens > max {
			t.Fatalf("completion tokens %d exceed max %d", c.usage.CompletionTokens, max)
		}
		for st := range c.steps(true, 4) {
			if b, err := json.Marshal(st.chunk); err != nil || !json.Valid(b) {
				t.Fatalf("chunk %q: %v", b, err)
			}
		}
	})
}

// FuzzParseConfig checks the config parser refuses bad input with an error,
// never a panic, and that what it accepts builds a server.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("latency: {ttft: 10ms}\nscript: {rules: [{when: {contains: [x]}, reply: {text: y}}]}\n"))
	f.Add([]byte(`{"faults":[{"kind":"timeout"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := parseConfig(raw)
		if err != nil {
			return
		}
		s, err := New(cfg)
		if err != nil && len(cfg.Faults) == 0 {
			t.Fatalf("parsed config %q but New failed: %v", raw, err)
		}
		if s != nil {
			_ = s.Close()
		}
	})
}
