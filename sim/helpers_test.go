package sim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends a raw chat request and returns the response and its body.
func post(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
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

// sseData returns the data: payloads of an event stream, in order.
func sseData(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// apiError decodes an OpenAI error body.
func apiError(t *testing.T, body []byte) (typ, code, param, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Type, Message string
			Code, Param   *string
		}
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return e.Error.Type, deref(e.Error.Code), deref(e.Error.Param), e.Error.Message
}

// chatBody builds a minimal request body with one user message.
func chatBody(model, user string, extra string) string {
	b, _ := json.Marshal(user)
	s := `{"model":"` + model + `","messages":[{"role":"user","content":` + string(b) + `}]`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

const demoTools = `"tools":[
 {"type":"function","function":{"name":"get_profile","description":"Get the user's profile: diet, allergies, goals.","parameters":{"type":"object","properties":{}}}},
 {"type":"function","function":{"name":"search_recipes","description":"Search recipes by keywords.","parameters":{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","minimum":1,"maximum":20}},"required":["query"]}}},
 {"type":"function","function":{"name":"log_meal","description":"Log a meal the user ate.","parameters":{"type":"object","properties":{"description":{"type":"string"},"meal_type":{"type":"string","enum":["breakfast","lunch","dinner","snack"]},"calories":{"type":"integer","minimum":0}},"required":["description","meal_type"]}}},
 {"type":"function","function":{"name":"recommend_workouts","description":"Recommend workouts for the user's goals.","parameters":{"type":"object","properties":{"goal":{"type":"string"}}}}}]`
