package completions_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/voxgate/voxgate/completions"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// forecastSchema is a strict schema as apps send them: nested objects,
// an enum, an array, numbers and a boolean.
const forecastSchema = `{"type":"object","additionalProperties":false,"required":["city","unit","days","windy"],
 "properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"windy":{"type":"boolean"},
  "days":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["high","rain"],
   "properties":{"high":{"type":"number"},"rain":{"type":"integer","minimum":0,"maximum":100}}}}}}`

func forecastFormat(t *testing.T) openai.ChatCompletionNewParamsResponseFormatUnion {
	return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "forecast", Strict: openai.Bool(true),
			Schema: simtest.Schema(t, forecastSchema)}}}
}

// A json_schema response_format sent with openai-go through the gateway
// reaches the OpenAI target, and the answer, whole and streamed (past the
// output filter), is JSON the schema accepts; JSON mode answers an object,
// and the output filter still withholds personal data in one.
func TestCompletionsStructuredOutput(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	client := c.client("u-format", "pro")
	ctx := context.Background()
	p := openai.ChatCompletionNewParams{Model: "chat", ResponseFormat: forecastFormat(t),
		Messages: []openai.ChatCompletionMessageParamUnion{userMsg("the forecast for the week")}}
	resp, err := client.Chat.Completions.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	simtest.Conforms(t, simtest.Schema(t, forecastSchema), resp.Choices[0].Message.Content)

	s := client.Chat.Completions.NewStreaming(ctx, p)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	simtest.Conforms(t, simtest.Schema(t, forecastSchema), acc.Choices[0].Message.Content)

	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	p.Messages = []openai.ChatCompletionMessageParamUnion{userMsg("the forecast as json")}
	if resp, err = client.Chat.Completions.New(ctx, p); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &obj); err != nil {
		t.Fatalf("JSON mode answered %q: %v", resp.Choices[0].Message.Content, err)
	}

	// The output filter screens a formatted answer as any: the script's
	// answer with an address is withheld.
	p.Messages = []openai.ChatCompletionMessageParamUnion{userMsg("my coach's contact as json")}
	_, err = client.Chat.Completions.New(ctx, p)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnprocessableEntity || apiErr.Code != "AI_PII_LEAK" {
		t.Fatalf("an address under JSON mode: %v, want 422 AI_PII_LEAK", err)
	}
}

// A response_format of the wrong shape is a 400 naming the member.
func TestCompletionsFormatRefusals(t *testing.T) {
	t.Parallel()
	body := func(format string) string {
		return `{"model":"d","messages":[{"role":"user","content":"hi"}],"response_format":` + format + `}`
	}
	for _, tc := range []struct{ name, format, param, says string }{
		{"not an object", `"json"`, "response_format", "not that shape"},
		{"no type", `{}`, "response_format.type", "required"},
		{"another type", `{"type":"xml"}`, "response_format.type", `"xml" is not`},
		{"an unknown member", `{"type":"json_object","schema":{}}`, "response_format", `unknown field "schema"`},
		{"json_schema missing", `{"type":"json_schema"}`, "response_format.json_schema", "required"},
		{"json_schema on text", `{"type":"text","json_schema":{"name":"a"}}`, "response_format.json_schema", `only with type "json_schema"`},
		{"no name", `{"type":"json_schema","json_schema":{"schema":{}}}`, "response_format.json_schema.name", "required"},
		{"a bad name", `{"type":"json_schema","json_schema":{"name":"a b"}}`, "response_format.json_schema.name", "letters"},
		{"a schema not an object", `{"type":"json_schema","json_schema":{"name":"a","schema":[1]}}`, "response_format.json_schema.schema", "JSON Schema object"},
		{"an unknown json_schema member", `{"type":"json_schema","json_schema":{"name":"a","strict_mode":true}}`, "response_format", `unknown field "strict_mode"`},
		{"strict not a boolean", `{"type":"json_schema","json_schema":{"name":"a","strict":"yes"}}`, "response_format", "not that shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := completions.DecodeCompletionRequest([]byte(body(tc.format)))
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.InvalidRequest || e.Fields["param"] != tc.param || !strings.Contains(e.Message, tc.says) {
				t.Fatalf("got %v %v, want INVALID_REQUEST, param %q, saying %q", err, fieldsOf(e), tc.param, tc.says)
			}
		})
	}
	for _, tc := range []struct {
		format string
		want   *llm.ResponseFormat
	}{
		{`null`, nil},
		{`{"type":"text"}`, nil},
		{`{"type":"json_object"}`, &llm.ResponseFormat{Type: llm.FormatJSONObject}},
		{`{"type":"json_schema","json_schema":{"name":"a","description":"d","strict":null,"schema":{"type":"object"}}}`,
			&llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: "a", Description: "d", Schema: json.RawMessage(`{"type":"object"}`)}},
	} {
		req, err := completions.DecodeCompletionRequest([]byte(body(tc.format)))
		if err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		lreq, err := req.LLMRequest()
		got, _ := json.Marshal(lreq.ResponseFormat)
		want, _ := json.Marshal(tc.want)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: read as %s (%v), want %s", tc.format, got, err, want)
		}
	}
}

// A response_format on a route whose only target cannot honour it
// (Gemini, for a strict schema's pattern, which it ignores) is openai-go's
// 400 naming the keyword, before the provider sees anything; without it
// the route answers.
func TestCompletionsFormatNoTargetHonours(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{})
	gem, err := gemini.New(t.Context(), gemini.Params{Name: "gemini", BaseURL: url, APIKey: simtest.TestKey})
	if err != nil {
		t.Fatal(err)
	}
	router, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"gemini": gem},
		Routes: []llm.Route{{Name: "g", Targets: []llm.Target{{Provider: "gemini", Model: "gemini-3.8-flash"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{sim: s, simURL: url, provider: func(llm.Provider) llm.Provider { return router },
		moreModels: []string{"gemini-3.8-flash"}})
	ts := httptest.NewServer(httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return f.svc.HandleCompletions(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{UserID: "u-format-g"})))
	}))
	t.Cleanup(ts.Close)
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	pattern := openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "code", Strict: openai.Bool(true),
			Schema: simtest.Schema(t, `{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}`)}}}
	p := openai.ChatCompletionNewParams{Model: "g", ResponseFormat: pattern,
		Messages: []openai.ChatCompletionMessageParamUnion{userMsg("the forecast")}}
	_, err = client.Chat.Completions.New(context.Background(), p)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest ||
		apiErr.Param != "response_format.json_schema.schema.properties.code.pattern" ||
		!strings.Contains(apiErr.Message, `no target of "g" can honour it`) {
		t.Fatalf("a format on a Gemini route: %v", err)
	}
	if n := s.Stats().Endpoints[sim.EndpointGeminiStream].Requests; n != 0 {
		t.Errorf("the provider saw %d requests", n)
	}
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfText: &shared.ResponseFormatTextParam{}}
	if _, err := client.Chat.Completions.New(context.Background(), p); err != nil {
		t.Fatalf("text on the Gemini route: %v", err)
	}
}
