package gemini

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/voxgate/voxgate/sim/openai"
)

// FuzzDecodeGeminiRequest feeds arbitrary bodies to the generateContent
// decoder and, when it accepts one, through the script and both
// renderings. Refusals must be 400 INVALID_ARGUMENT; accepted requests
// must render JSON with the finish reason on the last chunk.
func FuzzDecodeGeminiRequest(f *testing.F) {
	seeds := []string{
		`{"contents":[{"role":"user","parts":[{"text":"find me a pasta recipe"}]}]}`,
		`{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":1}}`,
		`{"tools":[{"functionDeclarations":[{"name":"log_meal","parametersJsonSchema":{"type":"object"}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["log_meal"]}},"contents":[{"role":"user","parts":[{"text":"eggs"}]}]}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]},{"role":"model","parts":[{"functionCall":{"id":"a","name":"f","args":{}},"thoughtSignature":"c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="}]},{"role":"user","parts":[{"functionResponse":{"id":"a","name":"f","response":{"ok":1}}}]}]}`,
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","required":["a"],"properties":{"a":{"oneOf":[{"type":"string","minLength":3},{"$ref":"#/$defs/n"}]}},"$defs":{"n":{"type":"integer","minimum":2}}}}}`,
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"ARRAY","items":{"type":"STRING"}}}}`,
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"text/csv"}}`,
		`{"contents":[{"parts":[{}]}]}`,
		`{"contents":`,
		`[]`,
		``,
	}
	for _, s := range seeds {
		f.Add([]byte(s), true)
	}
	script, err := openai.CompileScript(openai.Script{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, strict bool) {
		req, _, err := decodeGeminiRequest("gemini-3.8-flash", body, true, strict)
		if err != nil {
			var ge *geminiError
			if !errors.As(err, &ge) || ge.Code != 400 || ge.Status != "INVALID_ARGUMENT" {
				t.Fatalf("refusal %v is not a 400 INVALID_ARGUMENT", err)
			}
			return
		}
		g := newGeminiAnswer(req, script.Plan(req), "gemini-3.8-flash", openai.PromptTokens{Bytes: openai.PromptBytes(req)})
		if b, err := json.Marshal(g.whole()); err != nil || !json.Valid(b) {
			t.Fatalf("whole answer does not render: %v", err)
		}
		steps := g.steps(4)
		if last := steps[len(steps)-1].resp; last.Candidates[0].FinishReason == "" {
			t.Fatal("the last chunk has no finish reason")
		}
	})
}
