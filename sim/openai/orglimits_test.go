package openai_test

import (
	"net/http"
	"testing"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The usage and costs routes take the spec's bucket limits at
// bucket_width=1d (openai-openapi.yml: completions "max: 31", costs
// "between 1 and 180") and refuse a start_time before 1970, and both are
// counted in the stats (docs/sim.md, "Organization usage and costs").
func TestOrgLimitsAreTheSpecs(t *testing.T) {
	t.Parallel()
	s, ts := simtest.NewServer(t, sim.Config{})
	tests := []struct {
		path string
		want int
	}{
		{"/v1/organization/usage/completions?start_time=0&limit=31", http.StatusOK},
		{"/v1/organization/usage/completions?start_time=0&limit=32", http.StatusBadRequest},
		{"/v1/organization/costs?start_time=0&limit=180", http.StatusOK},
		{"/v1/organization/costs?start_time=0&limit=181", http.StatusBadRequest},
		{"/v1/organization/costs?start_time=-86400", http.StatusBadRequest},
		{"/v1/organization/usage/completions?start_time=-86400", http.StatusBadRequest},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest("GET", ts.URL+tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: got %d, want %d", tc.path, resp.StatusCode, tc.want)
		}
	}
	st := s.Stats().Endpoints
	if u, c := st[sim.EndpointOrgUsageCompletions].Requests, st[sim.EndpointOrgCosts].Requests; u != 3 || c != 3 {
		t.Errorf("stats: %d usage and %d costs requests, want 3 and 3", u, c)
	}
}
