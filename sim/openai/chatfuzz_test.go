package openai

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
		`{"model":"m","prompt_cache_options":{"ttl":"12h","mode":"explicit"},"service_tier":"flex","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","prompt_cache_options":{"ttl":7},"service_tier":null,"messages":[{"role":"user","content":"x"}]}`,
		`{"model":`,
		`[]`,
		``,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	script, err := CompileScript(Script{})
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
		if req.Model == "" || len(req.Msgs) == 0 {
			t.Fatalf("accepted a request without model or messages: %q", body)
		}
		c := NewCompletion(req, script.Plan(req), req.Model, PromptTokens{Bytes: PromptBytes(req)})
		if b := c.marshal(); !json.Valid(b) {
			t.Fatalf("completion %q is not JSON", b)
		}
		if max := req.maxCompletion(); max > 0 && c.Usage.CompletionTokens > max {
			t.Fatalf("completion tokens %d exceed max %d", c.Usage.CompletionTokens, max)
		}
		for st := range c.steps(true, 4) {
			if b, err := json.Marshal(st.chunk); err != nil || !json.Valid(b) {
				t.Fatalf("chunk %q: %v", b, err)
			}
		}
	})
}
