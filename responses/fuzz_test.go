package responses_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/responses"
)

// FuzzDecode: the request decoder never panics, refuses only with a 400
// in the API's error shape, and what it accepts turns into a
// conversation or a 400 naming where it is wrong.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"model":"chat","input":"hi"}`,
		`{"model":"chat","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"instructions":"x"}`,
		`{"model":"chat","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}`,
		`{"model":"chat","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":{"type":"function","name":"f"}}`,
		`{"model":"chat","input":"hi","tools":[{"type":"web_search"}]}`,
		`{"model":"chat","previous_response_id":"resp_abc","input":"hi","metadata":{"k":"v"},"store":false,"reasoning":{"effort":"low"}}`,
		`{"model":"chat","input":"hi","text":{"format":{"type":"text"}},"background":false,"truncation":"disabled"}`,
		`{"model":"","input":5}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := responses.Decode(body)
		if err != nil {
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status() != http.StatusBadRequest {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		if req.Model == "" {
			t.Fatal("accepted without a model")
		}
		items, err := req.Items()
		if err == nil {
			_, err = responses.Messages("", items)
		}
		var ae *apierr.Error
		if err != nil && (!errors.As(err, &ae) || ae.Status() != http.StatusBadRequest) {
			t.Fatalf("conversation refused with %v", err)
		}
	})
}
