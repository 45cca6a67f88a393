package llm_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const cityFormat = `{"type":"object","additionalProperties":false,"required":["city","days"],
 "properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":3}}}`

// cityRequest asks route for a strict json_schema answer.
func cityRequest(route string) llm.Request {
	return llm.Request{Model: route, Messages: []llm.Message{{Role: llm.RoleUser, Content: "a city, please"}},
		ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: "city", Description: "a city",
			Schema: json.RawMessage(cityFormat), Strict: true}}
}

// TestResponseFormatSent: the OpenAI adapter sends a response format as
// response_format, numbers as numbers, and the simulator's answer is JSON
// the schema accepts.
func TestResponseFormatSent(t *testing.T) {
	t.Parallel()
	_, url := newSim(t, sim.Config{})
	rec := &recorder{}
	s, err := newOpenAI(t, url, 0, rec).Stream(t.Context(), cityRequest("gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, s)
	if r.err != nil {
		t.Fatal(r.err)
	}
	simtest.Conforms(t, simtest.Schema(t, cityFormat), r.text)
	var body struct {
		Format struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Strict      bool           `json:"strict"`
				Schema      map[string]any `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(rec.last(t), &body); err != nil {
		t.Fatal(err)
	}
	js := body.Format.JSONSchema
	days, _ := js.Schema["properties"].(map[string]any)["days"].(map[string]any)
	if body.Format.Type != "json_schema" || js.Name != "city" || js.Description != "a city" || !js.Strict || days["minimum"] != 3.0 {
		t.Fatalf("sent %s", rec.last(t))
	}
}

// lengthFormat is a strict schema neither Anthropic (which refuses
// minLength) nor Gemini (which ignores it) can hold an answer to.
const lengthFormat = `{"type":"object","additionalProperties":false,"required":["city"],
 "properties":{"city":{"type":"string","minLength":3}}}`

// TestRouterPassesOverUnformatted: targets that cannot hold the answer to
// a format (Anthropic and Gemini, for minLength) are passed over: a route
// of them names the first one's field, and a mixed route passes them over
// to the OpenAI target. (Formats they can hold: llm/structured_test.go.)
func TestRouterPassesOverUnformatted(t *testing.T) {
	t.Parallel()
	_, root := newRootSim(t, sim.Config{})
	r, err := llm.NewRouter(llm.RouterParams{
		Providers: map[string]llm.Provider{"gemini-main": newGemini(t, root, 0, nil),
			"claude": newAnthropic(t, root, anthropic.Params{}, nil), "openai": newOpenAI(t, root+"/v1", 0, nil)},
		Routes: []llm.Route{
			{Name: "mixed", Targets: []llm.Target{{Provider: "claude", Model: "claude-haiku-5-5"},
				{Provider: "gemini-main", Model: geminiModel}, {Provider: "openai", Model: "gpt-4o-mini"}}},
			{Name: "others", Targets: []llm.Target{{Provider: "claude", Model: "claude-haiku-5-5"}, {Provider: "gemini-main", Model: geminiModel}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lengthRequest := func(route string) llm.Request {
		req := cityRequest(route)
		req.ResponseFormat.Schema = json.RawMessage(lengthFormat)
		return req
	}
	if got, want := r.Unhonoured("others", lengthRequest("others")), "response_format.json_schema.schema.properties.city.minLength"; got != want {
		t.Errorf("anthropic and gemini: Unhonoured %q, want %q", got, want)
	}
	if got := r.Unhonoured("mixed", lengthRequest("mixed")); got != "" {
		t.Errorf("mixed: Unhonoured %q, want none (openai can)", got)
	}
	if got := r.Unhonoured("others", llm.Request{Model: "others"}); got != "" {
		t.Errorf("text: Unhonoured %q", got)
	}
	s, err := r.Stream(t.Context(), lengthRequest("mixed"))
	if err != nil {
		t.Fatal(err)
	}
	res := drain(t, s)
	if res.err != nil || res.done == nil {
		t.Fatalf("result %+v", res)
	}
	simtest.Conforms(t, simtest.Schema(t, lengthFormat), res.text)
	want := []string{"claude/claude-haiku-5-5:unsupported", "gemini-main/" + geminiModel + ":unsupported", "openai/gpt-4o-mini:success"}
	if got := res.done.Trace.Strings(); !slices.Equal(got, want) {
		t.Fatalf("trace %v, want %v", got, want)
	}
}
