package responses_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/sim/simtest"
)

// post sends a raw body as user and returns the status and the error's
// code, param and message.
func (f *fixture) post(t *testing.T, user, body string) (int, string, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.gateway+"/v1/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test-User", user)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Param   string `json:"param"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return res.StatusCode, e.Error.Code, e.Error.Param, e.Error.Message
}

// TestRefusedByName: what voxgate does not act on is refused with 400
// naming it — hosted tools "not served by this gateway", background
// mode, sampling fields, unknown fields — and an unknown route or one the
// plan lacks is 404; nothing is admitted or recorded for any of them.
func TestRefusedByName(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	f := newFixture(t, options{})
	cases := []struct {
		name, body string
		status     int
		param      string
		says       string
	}{
		{"web search", `{"model":"chat","input":"hi","tools":[{"type":"web_search"}]}`, 400, "tools[0].type", "not served by this gateway"},
		{"file search", `{"model":"chat","input":"hi","tools":[{"type":"file_search","vector_store_ids":["v"]}]}`, 400, "tools[0].type", "not served by this gateway"},
		{"code interpreter", `{"model":"chat","input":"hi","tools":[{"type":"code_interpreter","container":{"type":"auto"}}]}`, 400, "tools[0].type", "not served by this gateway"},
		{"computer use", `{"model":"chat","input":"hi","tools":[{"type":"computer_use_preview","display_width":1,"display_height":1,"environment":"linux"}]}`, 400, "tools[0].type", "not served by this gateway"},
		{"background", `{"model":"chat","input":"hi","background":true}`, 400, "background", "background"},
		{"temperature", `{"model":"chat","input":"hi","temperature":0.2}`, 400, "temperature", "not acted on"},
		{"include", `{"model":"chat","input":"hi","include":["message.output_text.logprobs"]}`, 400, "include", "not acted on"},
		{"json schema without a schema", `{"model":"chat","input":"hi","text":{"format":{"type":"json_schema","name":"x"}}}`, 400, "text.format.schema", "required"},
		{"a strict schema gemini cannot hold", `{"model":"gem","input":"hi","text":{"format":{"type":"json_schema","name":"x","strict":true,"schema":{"type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"string","pattern":"^a"}}}}}}`, 400, "text.format.schema.properties.n.pattern", `no target of "gem" can honour it`},
		{"image input", `{"model":"chat","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x.example/a.png"}]}]}`, 400, "input[0].content[0]", ""},
		{"unanswered call", `{"model":"chat","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`, 400, "input", "no function_call_output"},
		{"unknown field", `{"model":"chat","input":"hi","colour":"red"}`, 400, "", "colour"},
		{"unknown route", `{"model":"nope","input":"hi"}`, 404, "model", ""},
		{"route the plan lacks", `{"model":"premium","input":"hi"}`, 404, "model", ""},
	}
	for _, c := range cases {
		status, _, param, msg := f.post(t, "u-refused", c.body)
		if status != c.status || (c.param != "" && param != c.param) || !strings.Contains(msg, c.says) {
			t.Errorf("%s: got %d param %q %q, want %d param %q saying %q", c.name, status, param, msg, c.status, c.param, c.says)
		}
	}
	if recs := f.records(t, "u-refused"); len(recs) != 0 {
		t.Errorf("refusals recorded %+v", recs)
	}
	if n := f.count(t, `SELECT count(*) FROM quota_tickets WHERE user_id = 'u-refused'`); n != 0 {
		t.Errorf("refusals admitted %d tickets", n)
	}
	_ = spec
	// An empty include asks for nothing: the Agents SDK sends one on
	// every request.
	if status, code, _, msg := f.post(t, "u-include", `{"model":"chat","input":"hi","include":[]}`); status != http.StatusOK {
		t.Errorf("include: []: %d %s %s, want it answered", status, code, msg)
	}
}
