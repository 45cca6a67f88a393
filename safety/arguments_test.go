package safety

import (
	"encoding/json"
	"testing"
)

func TestCheckArguments(t *testing.T) {
	t.Parallel()
	measures := map[string]string{"weight": WeightKg, "hr": HeartRate}
	for _, tc := range []struct {
		name, args string
		fields     []string // the fields flagged, in order
	}{
		{"in range", `{"weight": 70, "hr": 60}`, nil},
		{"both out", `{"weight": 19, "hr": 221}`, []string{"hr", "weight"}},
		{"at the bounds", `{"weight": 20, "hr": 220}`, nil},
		{"absent: the schema's business", `{"note": "x"}`, nil},
		{"null", `{"weight": null}`, nil},
		{"a string is not a number", `{"weight": "70"}`, []string{"weight"}},
		{"not an object", `[1]`, []string{""}},
	} {
		flags := CheckArguments(json.RawMessage(tc.args), measures)
		if len(flags) != len(tc.fields) {
			t.Errorf("%s: flags %+v, want on %v", tc.name, flags, tc.fields)
			continue
		}
		for i, f := range flags {
			if f.Field != tc.fields[i] || !f.Blocked || f.Type != UnsafeValue || f.Message == "" {
				t.Errorf("%s: flag %+v, want a blocking unsafe_value on %q", tc.name, f, tc.fields[i])
			}
		}
	}
	if f := CheckArguments(json.RawMessage(`{"x": 1}`), map[string]string{"x": "furlongs"}); len(f) != 1 || !f[0].Blocked {
		t.Errorf("an unknown measure: %+v, want blocked", f)
	}
}

// FuzzCheckArguments: tool arguments are the model's text; the guard
// never panics, and never passes a declared value it could not read as
// a number within range.
func FuzzCheckArguments(f *testing.F) {
	for _, s := range []string{`{"weight": 70}`, `{"weight": 1e308}`, `{"weight": "NaN"}`, `{"weight": -0}`, `{}`, `x`} {
		f.Add(s)
	}
	measures := map[string]string{"weight": WeightKg}
	r, _ := Lookup(WeightKg)
	f.Fuzz(func(t *testing.T, args string) {
		flags := CheckArguments(json.RawMessage(args), measures)
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) != nil {
			if len(flags) == 0 {
				t.Fatalf("%q does not decode, yet passed", args)
			}
			return
		}
		raw, ok := obj["weight"]
		if !ok || string(raw) == "null" {
			return
		}
		var v float64
		if json.Unmarshal(raw, &v) != nil || !r.Contains(v) {
			if len(flags) == 0 {
				t.Fatalf("%q passed with weight %s", args, raw)
			}
		}
	})
}
