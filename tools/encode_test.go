package tools

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/voxgate/voxgate/safety"
)

// TestEncodeResultMatchesEncodingJSON: the hand-written encoding of a stored
// result is byte for byte what encoding/json produces when the raw fields
// come from json.Marshal, as shape's and NewCard's do, and means the same
// JSON when they were written by hand.
func TestEncodeResultMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	card, err := NewCard("recipe", map[string]any{"id": 1, "title": "Soup <hot> & \"spicy\""})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]Result{
		"empty":   {},
		"minimal": {CallID: "c1", Name: "t", Output: `{"a":1}`, Result: json.RawMessage(`{"a":1}`), SafetyFlags: []safety.Flag{}},
		"full": {CallID: "c\u00e9\n\"1\"", Name: "search_recipes", Output: "{\"x\":\"<b>\\u2028\"}",
			Result: json.RawMessage(`{"recipes":[{"id":1}],"count":1}`), Cards: []Card{card, card},
			Partials:    []Card{{Kind: "recipes", Data: json.RawMessage(`{"recipes":[]}`)}},
			SafetyFlags: []safety.Flag{{Type: "unsafe_value", Message: "m", Blocked: true, Field: "calories"}},
			DBWrites:    []DBWrite{{Table: "meals", Operation: "insert", Data: json.RawMessage(`{"a":[1,2]}`), DryRun: true}},
			Error:       &ToolError{Code: "timeout", Message: "late"}, Replayed: true},
		"empty slices": {Cards: []Card{}, Partials: []Card{}, DBWrites: []DBWrite{}, SafetyFlags: []safety.Flag{}},
	}
	for name, r := range cases {
		got, _, _, err := encodeResult(&r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
		var back Result
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
	}
	// Raw JSON a tool wrote by hand is kept as written; it means the same.
	r := Result{Cards: []Card{{Kind: "k", Data: json.RawMessage(`{"t":"<a> & b"}`)}}}
	got, _, _, err := encodeResult(&r)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(&r)
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
		t.Fatalf("got %s, want the same JSON as %s", got, want)
	}
}

func TestShapeRefusesCardsThatAreNotJSON(t *testing.T) {
	t.Parallel()
	tool := echoTool("bad_card")
	if _, err := shape(tool, Outcome{Data: 1, Cards: []Card{{Kind: "x", Data: json.RawMessage(`{"a":`)}}}); err == nil {
		t.Fatal("a card whose data is not JSON was accepted")
	}
	if _, err := shape(tool, Outcome{Data: 1, Writes: []DBWrite{{Table: "t", Data: json.RawMessage(`nope`)}}}); err == nil {
		t.Fatal("a write whose data is not JSON was accepted")
	}
}
