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

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// mealSchema is a strict schema as apps send them, within what the
// Messages API takes once its objects are closed: the nested object does
// not say additionalProperties (the gateway says it).
const mealSchema = `{"type":"object","additionalProperties":false,"required":["meal","items","day"],
 "properties":{"meal":{"type":"string","enum":["breakfast","lunch"]},"day":{"type":"string","format":"date"},
  "items":{"type":"array","items":{"type":"object","required":["name","grams"],
   "properties":{"name":{"type":"string"},"grams":{"type":"integer"}}}}}}`

func schemaFormat(t *testing.T, schema string) openai.ChatCompletionNewParamsResponseFormatUnion {
	return openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "meal", Strict: openai.Bool(true),
			Schema: simtest.Schema(t, schema)}}}
}

// oneTargetClient is openai-go on a gateway whose route "r" has the one
// target provider/model, with the simulator behind it.
func oneTargetClient(t *testing.T, provider func(url string) llm.Provider, model, user string) (*openai.Client, *sim.Server) {
	t.Helper()
	s, url := testkit.NewSim(t, sim.Config{})
	router, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"p": provider(url)},
		Routes: []llm.Route{{Name: "r", Targets: []llm.Target{{Provider: "p", Model: model}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{sim: s, simURL: url, provider: func(llm.Provider) llm.Provider { return router },
		moreModels: []string{model}})
	ts := httptest.NewServer(httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return f.svc.HandleCompletions(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{UserID: user})))
	}))
	t.Cleanup(ts.Close)
	c := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	return &c, s
}

// answers asks p whole and streamed and checks both answers against
// schema.
func answers(t *testing.T, client *openai.Client, p openai.ChatCompletionNewParams, schema string) {
	t.Helper()
	resp, err := client.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	simtest.Conforms(t, simtest.Schema(t, schema), resp.Choices[0].Message.Content)
	s := client.Chat.Completions.NewStreaming(context.Background(), p)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	simtest.Conforms(t, simtest.Schema(t, schema), acc.Choices[0].Message.Content)
}

// refused checks err is openai-go's 400 naming param.
func refused(t *testing.T, err error, param string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != param ||
		!strings.Contains(apiErr.Message, `no target of "r" can honour it`) {
		t.Fatalf("got %v, want a 400 naming %s", err, param)
	}
}

// TestCompletionsStructuredOnAnthropic: response_format through openai-go
// on a route whose only target is Anthropic is answered there, whole and
// streamed, with JSON the schema accepts; what the Messages API cannot
// hold an answer to (JSON mode, a minimum) is a 400 naming it that never
// reaches the provider.
func TestCompletionsStructuredOnAnthropic(t *testing.T) {
	t.Parallel()
	client, s := oneTargetClient(t, func(url string) llm.Provider {
		a, err := anthropic.New(anthropic.Params{Name: "claude", BaseURL: url, APIKey: simtest.TestKey})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}, "claude-haiku-5-5", "u-format-anthropic")
	p := openai.ChatCompletionNewParams{Model: "r", ResponseFormat: schemaFormat(t, mealSchema),
		Messages: []openai.ChatCompletionMessageParamUnion{userMsg("log my breakfast")}}
	answers(t, client, p, mealSchema)
	sent := s.Stats().Endpoints[sim.EndpointAnthropicMessages].Requests

	p.ResponseFormat = schemaFormat(t, forecastSchema)
	_, err := client.Chat.Completions.New(context.Background(), p)
	refused(t, err, "response_format.json_schema.schema.properties.days.items.properties.rain.maximum")
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	p.Messages = []openai.ChatCompletionMessageParamUnion{userMsg("my breakfast as json")}
	_, err = client.Chat.Completions.New(context.Background(), p)
	refused(t, err, "response_format")
	if n := s.Stats().Endpoints[sim.EndpointAnthropicMessages].Requests; n != sent {
		t.Errorf("the provider saw %d requests for refused formats", n-sent)
	}
}

// TestCompletionsStructuredOnGemini: the same on a Gemini-only route: a
// json_schema answered whole and streamed, JSON mode answered with an
// object.
func TestCompletionsStructuredOnGemini(t *testing.T) {
	t.Parallel()
	client, _ := oneTargetClient(t, func(url string) llm.Provider {
		g, err := gemini.New(t.Context(), gemini.Params{Name: "gemini", BaseURL: url, APIKey: simtest.TestKey})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}, "gemini-3.8-flash", "u-format-gemini")
	p := openai.ChatCompletionNewParams{Model: "r", ResponseFormat: schemaFormat(t, forecastSchema),
		Messages: []openai.ChatCompletionMessageParamUnion{userMsg("the forecast for the week")}}
	answers(t, client, p, forecastSchema)

	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	p.Messages = []openai.ChatCompletionMessageParamUnion{userMsg("the forecast as json")}
	resp, err := client.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(resp.Choices[0].Message.Content), &obj); err != nil {
		t.Fatalf("JSON mode answered %q: %v", resp.Choices[0].Message.Content, err)
	}
}
