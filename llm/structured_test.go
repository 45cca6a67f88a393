package llm_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// mealFormat is a strict schema within what both Anthropic and Gemini
// take, its nested object silent on additionalProperties (as apps write
// them for OpenAI's non-strict mode).
const mealFormat = `{"type":"object","additionalProperties":false,"required":["meal","items"],
 "properties":{"meal":{"type":"string","enum":["breakfast","lunch"]},
  "items":{"type":"array","minItems":1,"items":{"type":"object","required":["name","grams"],
   "properties":{"name":{"type":"string"},"grams":{"type":"integer"}}}}}}`

func formatRequest(model, schema string, strict bool) llm.Request {
	return llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "log my breakfast"}},
		ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: "meal", Schema: json.RawMessage(schema), Strict: strict}}
}

// TestAnthropicStructuredOutput: a json_schema format goes as
// output_config.format, every object closed (the simulator, as the API,
// refuses one left open), and the answer, streamed or asked whole, is
// JSON the client's schema accepts.
func TestAnthropicStructuredOutput(t *testing.T) {
	t.Parallel()
	_, root := newRootSim(t, sim.Config{})
	rec := &recorder{}
	a := newAnthropic(t, root, anthropic.Params{}, rec)
	for _, whole := range []bool{false, true} {
		req := formatRequest("claude-haiku-5-5", mealFormat, true)
		req.Whole = whole
		if got := a.Unhonoured(req); got != "" {
			t.Fatalf("Unhonoured %q", got)
		}
		s, err := a.Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := drain(t, s)
		if r.err != nil || r.done == nil || r.done.FinishReason != llm.FinishStop {
			t.Fatalf("whole=%v: result %+v", whole, r)
		}
		simtest.Conforms(t, simtest.Schema(t, mealFormat), r.text)
	}
	var body struct {
		OutputConfig struct {
			Format struct {
				Type   string         `json:"type"`
				Schema map[string]any `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(rec.last(t), &body); err != nil {
		t.Fatal(err)
	}
	f := body.OutputConfig.Format
	item, _ := f.Schema["properties"].(map[string]any)["items"].(map[string]any)["items"].(map[string]any)
	if f.Type != "json_schema" || item["additionalProperties"] != false || len(item["required"].([]any)) != 2 {
		t.Fatalf("sent %s", rec.last(t))
	}
}

// TestAnthropicStructuredUnhonoured: what the Messages API cannot hold an
// answer to is named, schema keywords by their path; sent anyway (not
// through a router), the API's refusal is a 400 no retry helps, which a
// client is told as its own 400 (unit.RouteError).
func TestAnthropicStructuredUnhonoured(t *testing.T) {
	t.Parallel()
	_, root := newRootSim(t, sim.Config{})
	a := newAnthropic(t, root, anthropic.Params{}, nil)
	const schemaField = "response_format.json_schema.schema"
	for _, tc := range []struct {
		name, model, schema, want string
	}{
		{"a minimum", "claude-haiku-5-5", cityFormat, schemaField + ".properties.days.minimum"},
		{"an open object", "claude-haiku-5-5", `{"type":"object","additionalProperties":true}`, schemaField + ".additionalProperties"},
		{"minItems of two", "claude-sonnet-5-5", `{"type":"array","minItems":2,"items":{"type":"string"}}`, schemaField + ".minItems"},
		{"a string length in a definition", "claude-haiku-5-5",
			`{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string","maxLength":3}}}`,
			schemaField + ".$defs.s.maxLength"},
		{"a recursive schema", "claude-haiku-5-5",
			`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","additionalProperties":false,"properties":{"next":{"$ref":"#/$defs/n"}}}}}`,
			schemaField + ".$defs.n.properties.next.$ref"},
		{"oneOf", "claude-haiku-5-5", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, schemaField + ".oneOf"},
		{"a model before 4.5", "claude-3-5-haiku-20241022", mealFormat, "response_format"},
		{"a snapshot of 4.5", "claude-sonnet-4-5-20250929", mealFormat, ""},
	} {
		if got := a.Unhonoured(formatRequest(tc.model, tc.schema, true)); got != tc.want {
			t.Errorf("%s: Unhonoured %q, want %q", tc.name, got, tc.want)
		}
	}
	// Forty definitions each reaching the next twice: checked once each,
	// not 2^40 times.
	defs := map[string]any{}
	for i := range 40 {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"anyOf": []any{next, next}}
	}
	defs["d40"] = map[string]any{"type": "string"}
	dag, _ := json.Marshal(map[string]any{"$ref": "#/$defs/d0", "$defs": defs})
	if got := a.Unhonoured(formatRequest("claude-haiku-5-5", string(dag), true)); got != "" {
		t.Errorf("a schema reaching one definition by many paths: Unhonoured %q", got)
	}
	cont := formatRequest("claude-haiku-4-5", mealFormat, true)
	cont.Continue = true
	cont.Messages = append(cont.Messages, llm.Message{Role: llm.RoleAssistant, Content: `{"meal":"break`})
	if got := a.Unhonoured(cont); got != "continue" {
		t.Errorf("a formatted continuation: Unhonoured %q, want continue", got)
	}
	jsonMode := llm.Request{Model: "claude-haiku-5-5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "json please"}},
		ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONObject}}
	if got := a.Unhonoured(jsonMode); got != "response_format" {
		t.Errorf("JSON mode: Unhonoured %q, want response_format", got)
	}

	_, err := a.Stream(t.Context(), formatRequest("claude-haiku-5-5", cityFormat, true))
	e := anthErr(t, err)
	if e.Code != llm.UnknownProviderError || e.Status != http.StatusBadRequest || e.Retryable {
		t.Fatalf("a minimum sent anyway: %+v, want a 400 UNKNOWN_PROVIDER_ERROR, not retryable", e)
	}
}

// TestGeminiStructuredOutput: a json_schema format goes as the JSON mime
// type and responseJsonSchema, JSON mode as the mime type alone; answers,
// streamed or whole, keep to them.
func TestGeminiStructuredOutput(t *testing.T) {
	t.Parallel()
	_, root := newRootSim(t, sim.Config{})
	rec := &recorder{}
	g := newGemini(t, root, 0, rec)
	for _, whole := range []bool{false, true} {
		req := formatRequest(geminiModel, cityFormat, true)
		req.Whole = whole
		if got := g.Unhonoured(req); got != "" {
			t.Fatalf("Unhonoured %q", got)
		}
		s, err := g.Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := drain(t, s)
		if r.err != nil || r.done == nil {
			t.Fatalf("whole=%v: result %+v", whole, r)
		}
		simtest.Conforms(t, simtest.Schema(t, cityFormat), r.text)
	}
	gc, _ := bodyOf(t, rec.last(t))["generationConfig"].(map[string]any)
	days, _ := gc["responseJsonSchema"].(map[string]any)["properties"].(map[string]any)["days"].(map[string]any)
	if gc["responseMimeType"] != "application/json" || days["minimum"] != 3.0 {
		t.Fatalf("sent generationConfig %v", gc)
	}

	s, err := g.Stream(t.Context(), llm.Request{Model: geminiModel, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONObject}})
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, s)
	var obj map[string]any
	if r.err != nil || json.Unmarshal([]byte(r.text), &obj) != nil {
		t.Fatalf("JSON mode answered %q (%v)", r.text, r.err)
	}
	gc, _ = bodyOf(t, rec.last(t))["generationConfig"].(map[string]any)
	if _, has := gc["responseJsonSchema"]; gc["responseMimeType"] != "application/json" || has {
		t.Fatalf("JSON mode sent generationConfig %v", gc)
	}
}

// TestGeminiStructuredUnhonoured: Gemini ignores keywords outside its
// list, so a strict format naming one is passed over by its path; one
// that is not strict is sent as OpenAI would take it.
func TestGeminiStructuredUnhonoured(t *testing.T) {
	t.Parallel()
	_, root := newRootSim(t, sim.Config{})
	g := newGemini(t, root, 0, nil)
	const schema = `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"}}}}`
	if got, want := g.Unhonoured(formatRequest(geminiModel, schema, true)), "response_format.json_schema.schema.properties.tags.items.pattern"; got != want {
		t.Errorf("strict: Unhonoured %q, want %q", got, want)
	}
	if got := g.Unhonoured(formatRequest(geminiModel, schema, false)); got != "" {
		t.Errorf("not strict: Unhonoured %q, want none", got)
	}
}

// TestRouterLandsFormatOnAnthropic: a json_schema request on a route
// whose first target is Anthropic is answered there, no longer passed
// over; one with a keyword Anthropic refuses goes on to Gemini.
func TestRouterLandsFormatOnAnthropic(t *testing.T) {
	t.Parallel()
	_, root := newRootSim(t, sim.Config{})
	r, err := llm.NewRouter(llm.RouterParams{
		Providers: map[string]llm.Provider{"claude": newAnthropic(t, root, anthropic.Params{}, nil), "gemini-main": newGemini(t, root, 0, nil)},
		Routes: []llm.Route{{Name: "r", Targets: []llm.Target{{Provider: "claude", Model: "claude-haiku-5-5"},
			{Provider: "gemini-main", Model: geminiModel}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		schema string
		trace  []string
	}{
		{mealFormat, []string{"claude/claude-haiku-5-5:success"}},
		{cityFormat, []string{"claude/claude-haiku-5-5:unsupported", "gemini-main/" + geminiModel + ":success"}},
	} {
		s, err := r.Stream(t.Context(), formatRequest("r", tc.schema, true))
		if err != nil {
			t.Fatal(err)
		}
		res := drain(t, s)
		if res.err != nil || res.done == nil {
			t.Fatalf("result %+v", res)
		}
		simtest.Conforms(t, simtest.Schema(t, tc.schema), res.text)
		if got := res.done.Trace.Strings(); !slices.Equal(got, tc.trace) {
			t.Errorf("trace %v, want %v", got, tc.trace)
		}
	}
}
