package lifecycle_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/voxgate/voxgate/lifecycle"
)

// The provider's models list is input the gateway does not control: any
// body must read as a list or an error, never a panic, and a date read
// from it is a whole UTC day.
func FuzzListModels(f *testing.F) {
	f.Add(`{"object":"list","data":[{"id":"gpt-5-mini","object":"model","created":1,"owned_by":"system","shutdown_date":"2026-12-11"}]}`)
	f.Add(`{"object":"list","data":[{"id":"m","shutdown_date":null},{"id":"n"}]}`)
	f.Add(`{"object":"list","data":[{"id":"m","shutdown_date":"tomorrow"}]}`)
	f.Add(`{"data":{}}`)
	f.Add(`[]`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, body string) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		defer ts.Close()
		l, err := lifecycle.NewOpenAILister(ts.URL+"/v1", "sk-x", ts.Client())
		if err != nil {
			t.Fatal(err)
		}
		models, err := l.ListModels(t.Context())
		if err != nil {
			return
		}
		for _, m := range models {
			if m.HasShutdown && !m.Shutdown.Equal(m.Shutdown.Truncate(24*time.Hour)) {
				t.Fatalf("%q: shutdown %v is not a whole UTC day", m.ID, m.Shutdown)
			}
		}
	})
}
