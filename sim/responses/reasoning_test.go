package responses_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// apiError is err as openai-go raises an API error, or a failed test.
func apiError(t *testing.T, err error) *openai.Error {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an API error", err)
	}
	return e
}

// A stateless client (store: false) asks for the reasoning's
// encrypted_content, carries the reasoning item back before the call it
// preceded, and the simulator accepts and counts it; a tampered blob, or
// one sealed for another key, is the API's 400 invalid_encrypted_content,
// and a reasoning item by id alone that was never stored is its 404.
func TestReasoningCarriedBack(t *testing.T) {
	s, url := testkit.NewSim(t, sim.Config{})
	c := simtest.Client(url)
	ctx := context.Background()
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "o3", Store: openai.Bool(false),
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		Input:   responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		Tools:   []responses.ToolUnionParam{weatherTool}, ToolChoice: responses.ResponseNewParamsToolChoiceUnion{
			OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Output) != 2 || first.Output[0].Type != "reasoning" || first.Output[1].Type != "function_call" {
		t.Fatalf("output = %+v", first.Output)
	}
	rs, fc := first.Output[0].AsReasoning(), first.Output[1].AsFunctionCall()
	if !strings.HasPrefix(rs.EncryptedContent, "gAAAAA") {
		t.Fatalf("encrypted_content = %q, want an opaque gAAAAA… blob", rs.EncryptedContent)
	}
	next := func(content, key string, reasoning bool) error {
		var in responses.ResponseInputParam
		in = append(in, responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser))
		if reasoning {
			r := responses.ResponseReasoningItemParam{ID: rs.ID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
			if content != "" {
				r.EncryptedContent = openai.String(content)
			}
			in = append(in, responses.ResponseInputItemUnionParam{OfReasoning: &r})
		}
		out := responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(fc.CallID)}
		out.Output.OfString = openai.String(`{"sky":"clear"}`)
		in = append(in, responses.ResponseInputItemParamOfFunctionCall(fc.Arguments, fc.CallID, fc.Name),
			responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &out})
		_, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "o3", Store: openai.Bool(false),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: in}, Tools: []responses.ToolUnionParam{weatherTool}},
			withKey(key))
		return err
	}
	if err := next(rs.EncryptedContent, simtest.TestKey, true); err != nil {
		t.Fatalf("the reasoning carried back: %v", err)
	}
	if got := s.Stats().Endpoints["/v1/responses"].ReasoningItemsAccepted; got != 1 {
		t.Fatalf("reasoning items accepted = %d, want 1", got)
	}
	if err := next("", simtest.TestKey, false); err != nil {
		t.Fatalf("without the reasoning: %v", err)
	}
	// One character changed in the middle of the blob.
	b := []byte(rs.EncryptedContent)
	b[len(b)/2] ^= 1
	for name, bad := range map[string]struct{ content, key string }{
		"tampered": {string(b), simtest.TestKey},
		"foreign":  {rs.EncryptedContent, "sk-another-org"},
		"not ours": {"gAAAAABpM0Yj-abc=", simtest.TestKey},
	} {
		e := apiError(t, next(bad.content, bad.key, true))
		if e.StatusCode != http.StatusBadRequest || e.Code != "invalid_encrypted_content" || e.Param != "" ||
			!strings.HasPrefix(e.Message, "The encrypted content gAAA...") || !strings.HasSuffix(e.Message, " could not be verified.") {
			t.Errorf("%s: %d %q %q %q, want 400 invalid_encrypted_content", name, e.StatusCode, e.Code, e.Param, e.Message)
		}
	}
	e := apiError(t, next("", simtest.TestKey, true))
	if e.StatusCode != http.StatusNotFound || e.Param != "input" || !strings.Contains(e.Message, "Items are not persisted when `store` is set to false") {
		t.Errorf("by id, unstored: %d %q %q, want the 404 of an item not kept", e.StatusCode, e.Param, e.Message)
	}
	if got := s.Stats().Endpoints["/v1/responses"].ReasoningItemsAccepted; got != 1 {
		t.Errorf("reasoning items accepted after the refusals = %d, want still 1", got)
	}
}

// A reasoning item stored with its response (store: true) may be referred
// to by id alone; one that ends the input is the API's 400.
func TestReasoningByID(t *testing.T) {
	s, url := testkit.NewSim(t, sim.Config{})
	ep := url + "/v1/responses"
	status, body := call(t, "POST", ep, simtest.TestKey, `{"model":"o3","input":"Why?"}`)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	var r struct {
		Output []struct {
			ID               string  `json:"id"`
			Type             string  `json:"type"`
			EncryptedContent *string `json:"encrypted_content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Output) == 0 || r.Output[0].Type != "reasoning" {
		t.Fatalf("output %s: %v", body, err)
	}
	if r.Output[0].EncryptedContent != nil {
		t.Errorf("encrypted_content without include: %q", *r.Output[0].EncryptedContent)
	}
	rs := `{"type":"reasoning","id":"` + r.Output[0].ID + `","summary":[]}`
	status, body = call(t, "POST", ep, simtest.TestKey, `{"model":"o3","input":[{"role":"user","content":"Why?"},`+rs+`,{"role":"user","content":"And?"}]}`)
	if status != http.StatusOK {
		t.Fatalf("stored reasoning by id: %d %s", status, body)
	}
	if got := s.Stats().Endpoints["/v1/responses"].ReasoningItemsAccepted; got != 1 {
		t.Errorf("reasoning items accepted = %d, want 1", got)
	}
	status, body = call(t, "POST", ep, "sk-another-org", `{"model":"o3","input":[{"role":"user","content":"Why?"},`+rs+`,{"role":"user","content":"And?"}]}`)
	if status != http.StatusNotFound {
		t.Errorf("another key's reasoning by id: %d %s, want 404", status, body)
	}
	status, body = call(t, "POST", ep, simtest.TestKey, `{"model":"o3","input":[{"role":"user","content":"Why?"},`+rs+`]}`)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "was provided without its required following item") {
		t.Errorf("reasoning last: %d %s, want 400", status, body)
	}
}

// text.format json_schema with strict: true is held to strict mode's
// rules as Chat Completions' response_format is, with the same message,
// on text.format.schema; strict false takes any schema.
func TestTextFormatStrictSchema(t *testing.T) {
	_, url := testkit.NewSim(t, sim.Config{})
	ep := url + "/v1/responses"
	open := `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`
	partial := `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"]}`
	closed := `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"]}`
	for _, c := range []struct {
		name, schema string
		strict       bool
		status       int
		msg          string
	}{
		{"strict open", open, true, 400, "Invalid schema for response_format 'w': In context=(), 'additionalProperties' is required to be supplied and to be false."},
		{"strict partial", partial, true, 400, "Invalid schema for response_format 'w': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'b'."},
		{"strict closed", closed, true, 200, ""},
		{"lax open", open, false, 200, ""},
	} {
		body := `{"model":"gpt-4.1","input":"Weather?","text":{"format":{"type":"json_schema","name":"w","strict":` +
			map[bool]string{true: "true", false: "false"}[c.strict] + `,"schema":` + c.schema + `}}}`
		status, got := call(t, "POST", ep, simtest.TestKey, body)
		if status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, status, got, c.status)
			continue
		}
		if c.status != 400 {
			continue
		}
		var e struct {
			Error struct{ Message, Param, Code string } `json:"error"`
		}
		_ = json.Unmarshal(got, &e)
		if e.Error.Message != c.msg || e.Error.Param != "text.format.schema" || e.Error.Code != "invalid_json_schema" {
			t.Errorf("%s: %+v, want %q on text.format.schema", c.name, e.Error, c.msg)
		}
	}
}
