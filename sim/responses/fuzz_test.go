package responses

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// FuzzDecodeCreate feeds arbitrary bodies to the request decoder and,
// when it accepts one, through the pairing check, the script and both
// renderings: refusals are 400s, accepted requests render a response and
// events that are valid JSON, with usage that adds up.
func FuzzDecodeCreate(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4.1","input":"find me a pasta recipe"}`,
		`{"model":"o3","input":"why","reasoning":{"effort":"low"},"max_output_tokens":20,"stream":true}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"I had eggs"}]}],"tools":[{"type":"function","name":"log_meal","parameters":{"type":"object"},"strict":false}],"tool_choice":{"type":"function","name":"log_meal"}}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}`,
		`{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"}}}}`,
		`{"model":"m","input":"x","tools":[{"type":"web_search"}]}`,
		`{"model":"m","input":5}`, `{"model":`, `[]`, ``, `null`, `{"model":"m","input":"x","background":true}`,
	} {
		f.Add([]byte(s))
	}
	script, err := openai.CompileScript(openai.Script{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeCreate(body)
		if err == nil {
			err = checkPairing(req.items)
		}
		if err != nil {
			var ae *core.APIError
			if !errors.As(err, &ae) || ae.Status != 400 || ae.Type != "invalid_request_error" {
				t.Fatalf("got error %v, want a 400 invalid_request_error", err)
			}
			return
		}
		chat := req.chat(req.items)
		prompt := openai.PromptTokens{Bytes: openai.PromptBytes(chat)}
		a := newAnswer(req, chat, script.Plan(chat), req.Model, prompt, req.effort() != "")
		resp := shell(req, "resp_x", req.Model, a.effort, time.Now())
		evs := events(resp, a, 16)
		a.finish(resp, time.Now())
		if !json.Valid(mustJSON(resp)) {
			t.Fatal("response is not JSON")
		}
		for _, e := range evs {
			if _, err := json.Marshal(e.body); err != nil {
				t.Fatalf("event %v: %v", e.body["type"], err)
			}
		}
		u := resp.Usage
		if u.TotalTokens != u.InputTokens+u.OutputTokens || u.OutputTokensDetails.ReasoningTokens > u.OutputTokens {
			t.Fatalf("usage does not add up: %+v", u)
		}
		if m := req.MaxOutputTokens; m != nil && u.OutputTokens > *m {
			t.Fatalf("output tokens %d over max_output_tokens %d", u.OutputTokens, *m)
		}
	})
}
