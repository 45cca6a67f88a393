package anthropic_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// mealSchema keeps to the subset the API takes: nested objects with
// additionalProperties false, an enum, an array of at least one, a date.
const mealSchema = `{"type":"object","additionalProperties":false,"required":["meal","items","day"],
 "properties":{"meal":{"type":"string","enum":["breakfast","lunch"]},"day":{"type":"string","format":"date"},
  "items":{"type":"array","minItems":1,"items":{"type":"object","additionalProperties":false,"required":["name","grams"],
   "properties":{"name":{"type":"string"},"grams":{"type":"integer"}}}}}}`

func formatParams(model, schema string) anthropic.MessageNewParams {
	var m map[string]any
	_ = json.Unmarshal([]byte(schema), &m)
	return anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 200,
		Messages:     []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("log my breakfast"))},
		OutputConfig: anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: m}}}
}

// TestAnthropicOutputFormatAnswered: output_config.format sent with the
// SDK's typed params is answered, whole and streamed, with JSON the
// schema accepts.
func TestAnthropicOutputFormatAnswered(t *testing.T) {
	t.Parallel()
	_, c, _ := anthClient(t, sim.Config{})
	p := formatParams("claude-haiku-4-5", mealSchema)
	msg, err := c.Messages.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.StopReason != anthropic.StopReasonEndTurn {
		t.Fatalf("message %+v", msg)
	}
	simtest.Conforms(t, simtest.Schema(t, mealSchema), msg.Content[0].Text)
	streamed, _, err := stream(t, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(streamed.Content) != 1 || streamed.Content[0].Text != msg.Content[0].Text {
		t.Fatalf("streamed %+v, whole %q", streamed.Content, msg.Content[0].Text)
	}
}

// TestAnthropicOutputFormatRefused: what the API refuses in a format is a
// 400 invalid_request_error with its message, through the SDK.
func TestAnthropicOutputFormatRefused(t *testing.T) {
	t.Parallel()
	_, c, _ := anthClient(t, sim.Config{})
	for _, tc := range []struct{ name, model, schema, want string }{
		{"minimum on an integer", "claude-haiku-4-5",
			`{"type":"object","additionalProperties":false,"properties":{"n":{"type":"integer","minimum":1}}}`,
			"output_config.format.schema: For 'integer' type, property 'minimum' is not supported"},
		{"bounds on a number", "claude-sonnet-5-5",
			`{"type":"object","additionalProperties":false,"properties":{"n":{"type":"number","minimum":0,"maximum":1}}}`,
			"output_config.format.schema: For 'number' type, properties maximum, minimum are not supported"},
		{"no additionalProperties", "claude-haiku-5-5",
			`{"type":"object","properties":{"n":{"type":"string"}}}`,
			"output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false"},
		{"a nested open object", "claude-haiku-5-5",
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"object","additionalProperties":true}}}`,
			"'additionalProperties' must be explicitly set to false"},
		{"string length", "claude-haiku-5-5",
			`{"type":"object","additionalProperties":false,"properties":{"s":{"type":"string","maxLength":5}}}`,
			"For 'string' type, property 'maxLength' is not supported"},
		{"minItems above one", "claude-haiku-5-5",
			`{"type":"array","minItems":2,"items":{"type":"string"}}`, "'minItems' values other than 0 or 1"},
		{"a recursive schema", "claude-haiku-5-5",
			`{"$defs":{"n":{"type":"object","additionalProperties":false,"properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
			"recursive schemas are not supported"},
		{"a model before 4.5", "claude-3-5-haiku-20241022", mealSchema, "structured outputs are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Messages.New(t.Context(), formatParams(tc.model, tc.schema))
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest ||
				apiErr.Type() != anthropic.ErrorTypeInvalidRequestError || !strings.Contains(apiErr.RawJSON(), tc.want) {
				t.Fatalf("got %v, want a 400 invalid_request_error saying %q", err, tc.want)
			}
		})
	}
}

// TestAnthropicOutputConfigShapes: wrong shapes of output_config, sent
// raw, are refused as the API's validation refuses them.
func TestAnthropicOutputConfigShapes(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	const head = `{"model":"claude-haiku-5-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}],`
	for _, tc := range []struct{ body, want string }{
		{head + `"output_config":{"format":{"type":"json_object"}}}`, "output_config.format.type: Input should be 'json_schema'"},
		{head + `"output_config":{"format":{"type":"json_schema"}}}`, "output_config.format.schema: Field required"},
		{head + `"output_config":{"format":{"type":"json_schema","schema":[1]}}}`, "output_config.format.schema: Input should be a valid dictionary"},
		{head + `"output_config":{"format":{"type":"json_schema","schema":{},"name":"x"}}}`, "output_config.format.name: Extra inputs are not permitted"},
		{head + `"output_config":{"mode":"json"}}`, "output_config.mode: Extra inputs are not permitted"},
		{head + `"output_config":"json"}`, "output_config: Input should be a valid dictionary"},
		{head + `"output_format":{"type":"json_schema","schema":{}}}`, "output_format: Extra inputs are not permitted"},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/messages", strings.NewReader(tc.body))
		req.Header.Set("X-Api-Key", simtest.TestKey)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Type, Message string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || e.Error.Message != tc.want {
			t.Errorf("%s: %d %+v, want 400 %q", tc.body, resp.StatusCode, e.Error, tc.want)
		}
	}
}
