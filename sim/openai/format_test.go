package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// weatherSchema is a strict schema of the kinds of value common ones use:
// nested objects, an enum, an array of objects, integer, number, boolean,
// a nullable string, a length bound and a $ref.
const weatherSchema = `{"type":"object","additionalProperties":false,
 "required":["city","unit","days","alerts","place","note","code"],
 "properties":{
  "city":{"type":"string","minLength":12,"maxLength":20},
  "unit":{"type":"string","enum":["celsius","fahrenheit"]},
  "days":{"type":"array","minItems":2,"items":{"type":"object","additionalProperties":false,
    "required":["high","rain","day"],
    "properties":{"high":{"type":"number","minimum":-40},"rain":{"type":"integer","minimum":0,"maximum":100},"day":{"type":"string","format":"date"}}}},
  "alerts":{"type":"boolean"},
  "place":{"$ref":"#/$defs/place"},
  "note":{"type":["string","null"]},
  "code":{"anyOf":[{"type":"null"},{"type":"integer","exclusiveMinimum":5}]}},
 "$defs":{"place":{"type":"object","additionalProperties":false,"required":["lat"],"properties":{"lat":{"type":"number"}}}}}`

func schemaFormat(t *testing.T, strict bool, doc string) openai.ChatCompletionNewParamsResponseFormatUnion {
	return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather", Strict: openai.Bool(strict),
			Description: openai.String("a forecast"), Schema: simtest.Schema(t, doc)}}}
}

// A json_schema response_format, sent by openai-go's own params, is
// answered with JSON its schema accepts, whole and streamed; JSON mode
// with a JSON object; a script rule's text is still the answer.
func TestResponseFormatAnswered(t *testing.T) {
	t.Parallel()
	script := sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"scripted"}}, Reply: sim.Reply{Text: `{"fixed":1}`}}}}
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Script: script})
	client := simtest.Client(ts.URL)
	ctx := context.Background()
	p := ask("gpt-4o-mini", "You forecast.", func(p *openai.ChatCompletionNewParams) { p.ResponseFormat = schemaFormat(t, true, weatherSchema) })
	resp, err := client.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	whole := resp.Choices[0].Message.Content
	simtest.Conforms(t, simtest.Schema(t, weatherSchema), whole)

	s := client.Chat.Completions.NewStreaming(ctx, p)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != whole {
		t.Errorf("streamed %s, whole %s: the same schema is the same answer", got, whole)
	}

	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	p.Messages = append(p.Messages, openai.UserMessage("answer in json"))
	resp, err = client.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &obj); err != nil || obj["answer"] == "" {
		t.Errorf("JSON mode answered %q (%v), want a JSON object", resp.Choices[0].Message.Content, err)
	}

	p = ask("gpt-4o-mini", "You forecast.", func(p *openai.ChatCompletionNewParams) { p.ResponseFormat = schemaFormat(t, true, weatherSchema) })
	p.Messages = append(p.Messages, openai.UserMessage("scripted"))
	if resp, err = client.Chat.Completions.New(ctx, p); err != nil || resp.Choices[0].Message.Content != `{"fixed":1}` {
		t.Errorf("a rule's text: %v, %v", resp, err)
	}
}

// A bad response_format is the API's 400, naming the parameter.
func TestResponseFormatRefused(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	client := simtest.Client(ts.URL)
	open := `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`
	partial := `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"]}`
	for _, c := range []struct {
		name, body, param, code string
	}{
		{"type", `{"type":"xml"}`, "response_format.type", "invalid_value"},
		{"no type", `{}`, "response_format.type", "missing_required_parameter"},
		{"no json_schema", `{"type":"json_schema"}`, "response_format.json_schema", "missing_required_parameter"},
		{"no name", `{"type":"json_schema","json_schema":{"schema":{}}}`, "response_format.json_schema.name", "missing_required_parameter"},
		{"bad name", `{"type":"json_schema","json_schema":{"name":"a b"}}`, "response_format.json_schema.name", "invalid_value"},
		{"schema type", `{"type":"json_schema","json_schema":{"name":"a","schema":[]}}`, "response_format.json_schema.schema", "invalid_type"},
		{"strict open", `{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":` + open + `}}`, "response_format", ""},
		{"strict partial", `{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":` + partial + `}}`, "response_format", ""},
		{"json mode unasked", `{"type":"json_object"}`, "messages", ""},
	} {
		p := ask("gpt-4o-mini", "hi", nil)
		p.SetExtraFields(map[string]any{"response_format": json.RawMessage(c.body)})
		_, err := client.Chat.Completions.New(context.Background(), p)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != c.param || apiErr.Code != c.code {
			t.Errorf("%s: %v, want a 400 on %s (%q)", c.name, err, c.param, c.code)
		}
	}
	// A lax schema need not be closed.
	p := ask("gpt-4o-mini", "hi", func(p *openai.ChatCompletionNewParams) { p.ResponseFormat = schemaFormat(t, false, open) })
	resp, err := client.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	simtest.Conforms(t, simtest.Schema(t, open), resp.Choices[0].Message.Content)
}
