package gemini_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// mealSchema is a schema as apps send them, within what Gemini honours.
const mealSchema = `{"type":"object","required":["meal","items"],
 "properties":{"meal":{"type":"string","enum":["breakfast","lunch"]},
  "items":{"type":"array","minItems":2,"items":{"type":"object","required":["name","grams"],
   "properties":{"name":{"type":"string"},"grams":{"type":"integer","minimum":5}}}}}}`

func jsonConfig(t *testing.T, schema string) *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{ResponseMIMEType: "application/json", ResponseJsonSchema: simtest.Schema(t, schema)}
}

func userText(s string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(s, genai.RoleUser)}
}

// TestGeminiStructuredAnswered: responseJsonSchema with the JSON mime type,
// sent by genai, is answered whole and streamed with JSON the schema
// accepts; the mime type alone answers a JSON object.
func TestGeminiStructuredAnswered(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	c := simtest.NewGeminiClient(t, url)
	cfg := jsonConfig(t, mealSchema)
	resp, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", userText("log my breakfast"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	simtest.Conforms(t, simtest.Schema(t, mealSchema), resp.Text())
	var streamed strings.Builder
	for r, err := range c.Models.GenerateContentStream(t.Context(), "gemini-3.8-flash", userText("log my breakfast"), cfg) {
		if err != nil {
			t.Fatal(err)
		}
		streamed.WriteString(r.Text())
	}
	simtest.Conforms(t, simtest.Schema(t, mealSchema), streamed.String())

	resp, err = c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", userText("hi"), &genai.GenerateContentConfig{ResponseMIMEType: "application/json"})
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(resp.Text()), &obj); err != nil {
		t.Fatalf("JSON mode answered %q: %v", resp.Text(), err)
	}
}

// TestGeminiStructuredIgnoresUnlisted: a keyword outside the API's list
// (minLength) is ignored, not refused: the answer keeps to the rest of the
// schema and need not keep to it.
func TestGeminiStructuredIgnoresUnlisted(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	c := simtest.NewGeminiClient(t, url)
	const schema = `{"type":"object","required":["nickname"],"properties":{"nickname":{"type":"string","minLength":40}}}`
	resp, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", userText("a nickname"), jsonConfig(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Nickname string }
	if err := json.Unmarshal([]byte(resp.Text()), &got); err != nil || got.Nickname == "" || len(got.Nickname) >= 40 {
		t.Fatalf("answer %q (%v): want a nickname shorter than the ignored minLength", resp.Text(), err)
	}
}

// TestGeminiStructuredRefused: the shapes the API refuses are 400
// INVALID_ARGUMENT through genai.
func TestGeminiStructuredRefused(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	c := simtest.NewGeminiClient(t, url)
	schema := simtest.Schema(t, `{"type":"object"}`)
	for _, tc := range []struct {
		name string
		cfg  *genai.GenerateContentConfig
		want string
	}{
		{"an unknown mime type", &genai.GenerateContentConfig{ResponseMIMEType: "text/csv"}, "allowed mimetypes are text/plain, application/json"},
		{"a schema without the JSON mime type", &genai.GenerateContentConfig{ResponseJsonSchema: schema}, "application/json is required when response_json_schema is set"},
		{"both schemas", &genai.GenerateContentConfig{ResponseMIMEType: "application/json", ResponseJsonSchema: schema,
			ResponseSchema: &genai.Schema{Type: genai.TypeObject}}, "mutually exclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", userText("hi"), tc.cfg)
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest || apiErr.Status != "INVALID_ARGUMENT" || !strings.Contains(apiErr.Message, tc.want) {
				t.Fatalf("got %v, want 400 INVALID_ARGUMENT saying %q", err, tc.want)
			}
		})
	}
}
