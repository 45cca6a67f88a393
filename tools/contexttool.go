package tools

import (
	"encoding/json"
	"fmt"
)

// CheckContextTool refuses name as a context tool, whose result is the
// user's profile, unless it is registered and has no required parameters:
// a context tool is called with {} before the conversation starts.
func (r *Registry) CheckContextTool(name string) error {
	t, ok := r.Lookup(name)
	if !ok {
		return fmt.Errorf("no tool named %q", name)
	}
	var schema struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(t.Parameters, &schema); err != nil || len(schema.Required) > 0 {
		return fmt.Errorf("%q has required parameters; a context tool takes none", name)
	}
	return nil
}
