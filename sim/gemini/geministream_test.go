package gemini_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// postGemini sends a raw generateContent body and returns the answer.
func postGemini(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	return postGeminiTo(t, url+"/v1beta/models/gemini-3.8-flash:generateContent", key, body)
}

func postGeminiTo(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Goog-Api-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, b
}

// geminiStreamAll reads a genai stream to its end: the chunks, then the error
// that ended it, if any.
func geminiStreamAll(t *testing.T, c *genai.Client, model string) ([]*genai.GenerateContentResponse, error) {
	t.Helper()
	var got []*genai.GenerateContentResponse
	for resp, err := range c.Models.GenerateContentStream(t.Context(), model, genai.Text("hello there"), nil) {
		if err != nil {
			return got, err
		}
		got = append(got, resp)
	}
	return got, nil
}

// TestGeminiStreamFaults checks what genai reads from each stream fault.
func TestGeminiStreamFaults(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Text: "one two three four five six"}})
	c := simtest.NewGeminiClient(t, url)
	ep := sim.EndpointGeminiStream
	for _, tc := range []struct {
		name  string
		fault sim.Fault
		check func(chunks []*genai.GenerateContentResponse, err error) string
	}{
		{"whole", sim.Fault{}, func(ch []*genai.GenerateContentResponse, err error) string {
			if err != nil || len(ch) < 2 || ch[len(ch)-1].Candidates[0].FinishReason != genai.FinishReasonStop {
				return "want several chunks, the last with STOP"
			}
			return ""
		}},
		{"no_done", sim.Fault{Endpoint: ep, Kind: sim.FaultNoDone}, func(ch []*genai.GenerateContentResponse, err error) string {
			if err != nil || len(ch) == 0 || ch[len(ch)-1].Candidates[0].FinishReason != "" || ch[len(ch)-1].UsageMetadata == nil {
				return "want a clean end whose last chunk has usage and no finish reason"
			}
			return ""
		}},
		{"blocked prompt", sim.Fault{Endpoint: ep, Kind: sim.FaultContentFilter}, func(ch []*genai.GenerateContentResponse, err error) string {
			if err != nil || len(ch) != 1 || ch[0].PromptFeedback == nil || ch[0].PromptFeedback.BlockReason != genai.BlockedReasonSafety || len(ch[0].Candidates) != 0 {
				return "want one chunk with promptFeedback.blockReason SAFETY and no candidates"
			}
			return ""
		}},
		{"safety stop", sim.Fault{Endpoint: ep, Kind: sim.FaultContentFilter, AfterChunks: 2}, func(ch []*genai.GenerateContentResponse, err error) string {
			if err != nil || len(ch) != 3 || ch[2].Candidates[0].FinishReason != genai.FinishReasonSafety {
				return "want two text chunks, then finishReason SAFETY"
			}
			return ""
		}},
		{"stream_error", sim.Fault{Endpoint: ep, Kind: sim.FaultStreamError, AfterChunks: 1}, func(ch []*genai.GenerateContentResponse, err error) string {
			var apiErr genai.APIError
			if len(ch) != 1 || !errors.As(err, &apiErr) || apiErr.Code != 500 || apiErr.Status != "INTERNAL" {
				return "want one chunk, then a 500 INTERNAL error event"
			}
			return ""
		}},
		{"cut_stream", sim.Fault{Endpoint: ep, Kind: sim.FaultCutStream, AfterChunks: 1}, func(ch []*genai.GenerateContentResponse, err error) string {
			if len(ch) != 1 || !errors.Is(err, io.ErrUnexpectedEOF) {
				return "want one chunk, then an unexpected EOF"
			}
			return ""
		}},
		{"malformed_json", sim.Fault{Endpoint: ep, Kind: sim.FaultMalformedJSON, AfterChunks: 1}, func(ch []*genai.GenerateContentResponse, err error) string {
			var syntax *json.SyntaxError
			if len(ch) != 1 || !errors.As(err, &syntax) {
				return "want one chunk, then a JSON syntax error"
			}
			return ""
		}},
		{"reset", sim.Fault{Endpoint: ep, Kind: sim.FaultReset}, func(ch []*genai.GenerateContentResponse, err error) string {
			var apiErr genai.APIError
			if len(ch) != 0 || err == nil || errors.As(err, &apiErr) {
				return "want a transport error before any chunk"
			}
			return ""
		}},
	} {
		if tc.fault.Kind != "" {
			if _, err := s.AddFault(tc.fault); err != nil {
				t.Fatal(err)
			}
		}
		chunks, err := geminiStreamAll(t, c, "gemini-3.8-flash")
		if msg := tc.check(chunks, err); msg != "" {
			t.Errorf("%s: got %d chunks, err %v: %s", tc.name, len(chunks), err, msg)
		}
	}
}

// TestGeminiBadRequests checks refusals of bodies the API would refuse.
func TestGeminiBadRequests(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	for _, tc := range []struct{ name, body, want string }{
		{"not JSON", `{`, "Invalid JSON payload"},
		{"unknown field", `{"contents":[{"parts":[{"text":"hi"}]}],"temperature":1}`, `Unknown name \"temperature\"`},
		{"no contents", `{}`, "contents is not specified"},
		{"empty part", `{"contents":[{"role":"user","parts":[{}]}]}`, "required oneof field 'data'"},
		{"bad role", `{"contents":[{"role":"assistant","parts":[{"text":"hi"}]}]}`, "valid role"},
		{"unanswered call", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="}]},{"role":"user","parts":[{"text":"and?"}]}]}`, "number of function response parts"},
		{"stray response", `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "function response turn comes immediately after a function call turn"},
	} {
		resp, body := postGemini(t, url, simtest.TestKey, tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), "INVALID_ARGUMENT") || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: got %d %s, want 400 INVALID_ARGUMENT with %q", tc.name, resp.StatusCode, body, tc.want)
		}
	}
}
