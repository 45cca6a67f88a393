package responses_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// call sends a raw request to the simulator and returns its status and body.
func call(t *testing.T, method, url, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// sseEvents splits a stream into its (event name, data) pairs.
func sseEvents(t *testing.T, body []byte) (names, data []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
	if len(names) != len(data) {
		t.Fatalf("%d event names for %d data lines", len(names), len(data))
	}
	return names, data
}

const weatherJSON = `{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}`

// TestSpecShapes validates every response, event, list and error the
// simulator sends against the spec's schemas: texts, calls, reasoning,
// incomplete, continuation, input_items, the stream's events and its
// failures.
func TestSpecShapes(t *testing.T) {
	spec := simtest.Spec(t)
	_, url := testkit.NewSim(t, sim.Config{})
	ep := url + "/v1/responses"
	validate := func(schema string, b []byte) {
		t.Helper()
		if err := spec.Validate(schema, b); err != nil {
			t.Errorf("%s: %v\n%s", schema, err, b)
		}
	}
	bodies := []string{
		`{"model":"gpt-4.1","input":"Hello there","metadata":{"k":"v"},"user":"u1","safety_identifier":"s1","prompt_cache_key":"p1"}`,
		`{"model":"gpt-4.1","input":"Weather in Paris?","tools":[` + weatherJSON + `],"tool_choice":"required"}`,
		`{"model":"o3","input":"Why?","reasoning":{"effort":"high","summary":"auto"}}`,
		`{"model":"o3","input":"Why?","max_output_tokens":16}`,
		`{"model":"o3","input":"Why?","store":false,"include":["reasoning.encrypted_content"]}`,
		`{"model":"gpt-4.1","input":"Weather?","text":{"format":{"type":"json_schema","name":"w","schema":{"type":"object","properties":{"city":{"type":"string"}}}}}}`,
		`{"model":"gpt-4.1","input":[{"role":"developer","content":"Be kind."},{"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"}]},{"role":"assistant","content":[{"type":"output_text","text":"Hello"}]},{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"sunny"}],"tools":[` + weatherJSON + `]}`,
	}
	var lastID string
	for _, b := range bodies {
		status, resp := call(t, "POST", ep, simtest.TestKey, b)
		if status != 200 {
			t.Fatalf("%s: %d %s", b, status, resp)
		}
		validate("Response", resp)
		var r struct{ ID string }
		_ = json.Unmarshal(resp, &r)
		lastID = r.ID

		stream := strings.TrimSuffix(b, "}") + `,"stream":true}`
		status, resp = call(t, "POST", ep, simtest.TestKey, stream)
		if status != 200 {
			t.Fatalf("%s: %d %s", stream, status, resp)
		}
		names, data := sseEvents(t, resp)
		for i, d := range data {
			validate("ResponseStreamEvent", []byte(d))
			var e struct {
				Type string `json:"type"`
				Seq  int    `json:"sequence_number"`
			}
			_ = json.Unmarshal([]byte(d), &e)
			if e.Type != names[i] || e.Seq != i {
				t.Errorf("event %d: name %q, type %q, sequence %d", i, names[i], e.Type, e.Seq)
			}
		}
	}
	status, list := call(t, "GET", ep+"/"+lastID+"/input_items?limit=2&order=asc", simtest.TestKey, "")
	if status != 200 {
		t.Fatalf("input_items: %d %s", status, list)
	}
	validate("ResponseItemList", list)
	var l struct {
		Data    []json.RawMessage
		HasMore bool `json:"has_more"`
	}
	_ = json.Unmarshal(list, &l)
	if len(l.Data) != 2 || !l.HasMore {
		t.Errorf("input_items limit 2 of 5: %d items, has_more %v", len(l.Data), l.HasMore)
	}
	for _, bad := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "", `{"model":"gpt-4.1","input":"x","bogus":1}`, 400},
		{"POST", "", `{"model":"gpt-4.1","input":"x","tools":[{"type":"web_search"}]}`, 400},
		{"POST", "", `{"model":"gpt-4.1","input":"x","background":true}`, 400},
		{"POST", "", `{"model":"gpt-4.1","input":"x","max_output_tokens":5}`, 400},
		{"POST", "", `{"model":"gpt-4.1","input":"x","previous_response_id":"resp_nope"}`, 404},
		{"POST", "", `{"model":"gpt-4.1","input":[{"type":"function_call_output","call_id":"x","output":"y"}]}`, 400},
		{"GET", "/resp_nope", ``, 404},
		{"DELETE", "/resp_nope", ``, 404},
	} {
		status, b := call(t, bad.method, ep+bad.path, simtest.TestKey, bad.body)
		if status != bad.status {
			t.Errorf("%s %s %s: %d %s, want %d", bad.method, bad.path, bad.body, status, b, bad.status)
		}
		validate("ErrorResponse", b)
	}
}

// TestStreamFaults: a stream error after two events is an error event
// then response.failed; a content filter ends the response incomplete;
// a rate limit is a 429 before any event. Each event validates.
func TestStreamFaults(t *testing.T) {
	spec := simtest.Spec(t)
	body := `{"model":"gpt-4.1","input":"Tell me a story","stream":true}`
	for _, tc := range []struct {
		fault sim.Fault
		last  []string
	}{
		{sim.Fault{Kind: sim.FaultStreamError, AfterChunks: 2}, []string{"error", "response.failed"}},
		{sim.Fault{Kind: sim.FaultContentFilter, AfterChunks: 3}, []string{"response.incomplete"}},
	} {
		_, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{tc.fault}})
		status, b := call(t, "POST", url+"/v1/responses", simtest.TestKey, body)
		names, data := sseEvents(t, b)
		if status != 200 || len(names) != tc.fault.AfterChunks+len(tc.last) {
			t.Fatalf("%s: %d, events %v", tc.fault.Kind, status, names)
		}
		if got := names[tc.fault.AfterChunks:]; strings.Join(got, ",") != strings.Join(tc.last, ",") {
			t.Errorf("%s: ends %v, want %v", tc.fault.Kind, got, tc.last)
		}
		for _, d := range data {
			if err := spec.Validate("ResponseStreamEvent", []byte(d)); err != nil {
				t.Errorf("%s: %v\n%s", tc.fault.Kind, err, d)
			}
		}
	}
	s, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Endpoint: "/v1/responses", Kind: sim.FaultRateLimit}}})
	status, b := call(t, "POST", url+"/v1/responses", simtest.TestKey, body)
	if status != 429 {
		t.Fatalf("rate limit: %d %s", status, b)
	}
	if err := spec.Validate("ErrorResponse", b); err != nil {
		t.Error(err)
	}
	if got := s.Stats().Endpoints["/v1/responses"].FaultsServed; got != 1 {
		t.Errorf("faults served %d, want 1", got)
	}
	_, url = testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Kind: sim.FaultMalformedJSON}}})
	status, b = call(t, "POST", url+"/v1/responses", simtest.TestKey, `{"model":"gpt-4.1","input":"x"}`)
	if status != 200 || json.Valid(b) {
		t.Errorf("malformed JSON: %d, valid %v", status, json.Valid(b))
	}
}
