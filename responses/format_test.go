package responses_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresp "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim/simtest"
)

// planSchema is a strict schema as an app sends one: nested objects, an
// enum, an array, numbers and a boolean.
const planSchema = `{"type":"object","additionalProperties":false,"required":["title","level","steps","rest"],
 "properties":{"title":{"type":"string"},"level":{"type":"string","enum":["easy","hard"]},"rest":{"type":"boolean"},
  "steps":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["minutes","reps"],
   "properties":{"minutes":{"type":"number","minimum":5},"reps":{"type":"integer"}}}}}}`

func planFormat(t *testing.T) oresp.ResponseTextConfigParam {
	return oresp.ResponseTextConfigParam{Format: oresp.ResponseFormatTextConfigUnionParam{
		OfJSONSchema: &oresp.ResponseFormatTextJSONSchemaConfigParam{Name: "plan", Strict: openai.Bool(true),
			Description: openai.String("a training plan"), Schema: simtest.Schema(t, planSchema)}}}
}

// text.format json_schema, sent with openai-go's Responses.New and its
// Text param, is answered with JSON the schema accepts, whole and
// streamed; the response says the format back and validates against the
// spec, as every streamed event does; json_object answers an object.
func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	cl := f.client("u-format")
	p := oresp.ResponseNewParams{Model: "chat", Input: text("a plan for the week"), Text: planFormat(t)}
	resp, err := cl.Responses.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	simtest.Conforms(t, simtest.Schema(t, planSchema), resp.OutputText())
	if err := simtest.Spec(t).Validate("Response", []byte(resp.RawJSON())); err != nil {
		t.Errorf("response: %v", err)
	}
	if got := resp.Text.Format; got.Type != "json_schema" || got.Name != "plan" || !got.Strict || got.Schema["required"] == nil {
		t.Errorf("text.format said back as %s", resp.Text.Format.RawJSON())
	}

	s := collect(t, cl.Responses.NewStreaming(ctx, p))
	s.check(t)
	simtest.Conforms(t, simtest.Schema(t, planSchema), s.text.String())

	p.Text = oresp.ResponseTextConfigParam{Format: oresp.ResponseFormatTextConfigUnionParam{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}}
	p.Input = text("the plan as json")
	if resp, err = cl.Responses.New(ctx, p); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(resp.OutputText()), &obj); err != nil || resp.Text.Format.Type != "json_object" {
		t.Errorf("JSON mode answered %q (%v), format %s", resp.OutputText(), err, resp.Text.Format.RawJSON())
	}
}

// A text.format of the wrong shape is a 400 naming the member; a strict
// schema with a keyword Gemini would ignore, on a route of only Gemini, is
// refused by that keyword's path under text.format before the provider
// sees anything.
func TestFormatRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	body := func(model, text string) string { return `{"model":"` + model + `","input":"hi","text":` + text + `}` }
	for _, c := range []struct{ name, body, param, says string }{
		{"text not an object", body("chat", `"json"`), "text", "not that shape"},
		{"an unknown text member", body("chat", `{"style":"x"}`), "text", `unknown field "style"`},
		{"verbosity", body("chat", `{"verbosity":"low"}`), "text.verbosity", "not acted on"},
		{"no type", body("chat", `{"format":{}}`), "text.format.type", "required"},
		{"another type", body("chat", `{"format":{"type":"xml"}}`), "text.format.type", `"xml" is not`},
		{"a name on json_object", body("chat", `{"format":{"type":"json_object","name":"a"}}`), "text.format", `only for type "json_schema"`},
		{"an unknown format member", body("chat", `{"format":{"type":"json_schema","name":"a","schema":{},"json_schema":{}}}`), "text.format", `unknown field "json_schema"`},
		{"no name", body("chat", `{"format":{"type":"json_schema","schema":{}}}`), "text.format.name", "required"},
		{"a bad name", body("chat", `{"format":{"type":"json_schema","name":"a b","schema":{}}}`), "text.format.name", "letters"},
		{"a schema not an object", body("chat", `{"format":{"type":"json_schema","name":"a","schema":true}}`), "text.format.schema", "JSON Schema object"},
		{"a keyword no gemini target can hold", body("gem", `{"format":{"type":"json_schema","name":"a","strict":true,"schema":{"type":"object","additionalProperties":false,"required":["code"],"properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}}}`),
			"text.format.schema.properties.code.pattern", `no target of "gem" can honour it`},
	} {
		status, _, param, msg := f.post(t, "u-format-bad", c.body)
		if status != 400 || param != c.param || !strings.Contains(msg, c.says) {
			t.Errorf("%s: got %d param %q %q, want 400 param %q saying %q", c.name, status, param, msg, c.param, c.says)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM quota_tickets WHERE user_id = 'u-format-bad'`); n != 0 {
		t.Errorf("refusals admitted %d tickets", n)
	}
	if status, _, _, msg := f.post(t, "u-format-text", body("chat", `{"format":{"type":"text"}}`)); status != 200 {
		t.Errorf("text: %d %s", status, msg)
	}
}

// The official Node openai client's responses.parse and a streamed
// text.format json_schema through the gateway: the client parses the
// answer itself (output_parsed) and gets the format said back, on a route
// of OpenAI and on one of only Gemini.
func TestNodeStructuredOutput(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	f := newFixture(t, options{})
	schema := simtest.Schema(t, `{"type":"object","additionalProperties":false,"required":["title","level","days"],
	 "properties":{"title":{"type":"string"},"level":{"type":"string","enum":["easy","hard"]},"days":{"type":"integer","minimum":3}}}`)
	parsed := nodeResponses(t, node, dir, f.gateway, "u-node-format", "parse", "chat", "a plan")
	format, _ := parsed["format"].(map[string]any)
	if parsed["ok"] != true || parsed["status"] != "completed" || format["type"] != "json_schema" || format["name"] != "plan" {
		t.Fatalf("parse: %v", parsed)
	}
	b, _ := json.Marshal(parsed["parsed"])
	simtest.Conforms(t, schema, string(b))

	streamed := nodeResponses(t, node, dir, f.gateway, "u-node-format", "parse-stream", "chat", "a plan")
	text, _ := streamed["text"].(string)
	if streamed["ok"] != true || streamed["final"] != text || streamed["format"] != "json_schema" {
		t.Fatalf("parse-stream: %v, want the deltas' text as the final response's", streamed)
	}
	simtest.Conforms(t, schema, text)

	// The same strict schema on a route of only Gemini, which holds every
	// keyword in it (responseJsonSchema; docs/llm.md, "Structured outputs").
	gem := nodeResponses(t, node, dir, f.gateway, "u-node-format", "parse", "gem", "a plan")
	if gem["ok"] != true || gem["status"] != "completed" {
		t.Fatalf("parse on a Gemini route: %v", gem)
	}
	b, _ = json.Marshal(gem["parsed"])
	simtest.Conforms(t, schema, string(b))
}
