package tools_test

import (
	"fmt"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/tools"
)

// A failed or refused call reads the same to the model whoever answers it.
func TestToolErrorOutput(t *testing.T) {
	cases := []struct {
		name string
		te   *tools.ToolError
		want string
	}{
		{"tool failure", tools.Failf("not_found", "No recipe with id %d.", 7), `{"error":{"code":"not_found","message":"No recipe with id 7."}}`},
		{"refusal", tools.Refusal(apierr.New(apierr.ToolNotAllowed, "Not on your plan.")), `{"error":{"code":"TOOL_NOT_ALLOWED","message":"Not on your plan."}}`},
		{"wrapped refusal", tools.Refusal(fmt.Errorf("run: %w", apierr.New(apierr.ToolValidation, `Field "id" is required.`))),
			`{"error":{"code":"TOOL_VALIDATION_ERROR","message":"Field \"id\" is required."}}`},
		{"escaped", tools.Failf("denied", "<b> & \"x\""), `{"error":{"code":"denied","message":"\u003cb\u003e \u0026 \"x\""}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.te.Output(); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}
