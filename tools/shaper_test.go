package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBoundOutput(t *testing.T) {
	t.Parallel()
	items := make([]map[string]any, 50)
	for i := range items {
		items[i] = map[string]any{"id": i, "title": strings.Repeat("x", 40)}
	}
	big, _ := json.Marshal(map[string]any{"recipes": items, "count": 50})
	long, _ := json.Marshal(map[string]any{"text": strings.Repeat("é", 2000)})
	cases := []struct {
		name      string
		in        []byte
		limit     int
		truncated bool
	}{
		{"fits", []byte(`{"a": 1,  "b": [1, 2]}`), 100, false},
		{"array trimmed", big, 600, true},
		{"long string cut on a rune boundary", long, 1000, true},
		{"top-level array", []byte(`[` + strings.Repeat(`"abcdefgh",`, 100) + `"z"]`), 200, true},
		{"hopeless", []byte(`{"` + strings.Repeat("k", 500) + `":1}`), 128, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := boundOutput(c.in, c.limit)
			if len(got) > c.limit {
				t.Fatalf("got %d bytes, want at most %d", len(got), c.limit)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("got invalid JSON %q", got)
			}
			if tr := strings.Contains(got, `"truncated":true`); tr != c.truncated {
				t.Fatalf("truncated: got %v, want %v (%s)", tr, c.truncated, got)
			}
		})
	}
	t.Run("keeps the first items", func(t *testing.T) {
		got := boundOutput(big, 600)
		var v struct {
			Recipes []struct{ ID int } `json:"recipes"`
			Count   int
		}
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatal(err)
		}
		if len(v.Recipes) == 0 || v.Recipes[0].ID != 0 || v.Count != 50 {
			t.Fatalf("got %s, want the leading recipes and the count kept", got)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		if a, b := boundOutput(big, 700), boundOutput(big, 700); a != b {
			t.Fatalf("got %s then %s", a, b)
		}
	})
}

func TestShapeUsesModelView(t *testing.T) {
	t.Parallel()
	tool := &Tool{Name: "t", MaxTokens: 100}
	r, err := shape(tool, Outcome{Data: map[string]string{"secret_row": "everything"}, Model: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Output != `{"n":1}` || !strings.Contains(string(r.Result), "secret_row") {
		t.Fatalf("got output %s result %s", r.Output, r.Result)
	}
	if r.SafetyFlags == nil {
		t.Fatal("safety_flags must be [] not null")
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
