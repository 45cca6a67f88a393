package tools

import (
	"strings"
	"testing"
)

// A context tool is called with {}: it must exist and require nothing.
func TestCheckContextTool(t *testing.T) {
	t.Parallel()
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{
		withSchema("profile", `{"type":"object","properties":{}}`),
		withSchema("needs_q", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
	}})
	cases := []struct {
		name, tool, want string // want: a part of the error, "" for none
	}{
		{"no required parameters", "profile", ""},
		{"a required parameter", "needs_q", `"needs_q" has required parameters`},
		{"not registered", "nope", `no tool named "nope"`},
	}
	for _, tc := range cases {
		err := reg.CheckContextTool(tc.tool)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: got %v, want no error", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
