package responses_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestFaultsThroughSDK: what openai-go makes of each fault on
// /v1/responses: a 500 and a 429 as API errors with their status, a cut
// stream as a stream error after the events before the cut, a stream
// error as the stream's end with an error.
func TestFaultsThroughSDK(t *testing.T) {
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Tell me a story.")}}
	for _, tc := range []struct {
		kind   sim.FaultKind
		status int
	}{{sim.FaultServerError, http.StatusInternalServerError}, {sim.FaultRateLimit, http.StatusTooManyRequests}, {sim.FaultQuota, http.StatusTooManyRequests}} {
		_, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Endpoint: "/v1/responses", Kind: tc.kind}}})
		c := simtest.Client(url)
		_, err := c.Responses.New(ctx, params)
		if got := apiStatus(t, err); got != tc.status {
			t.Errorf("%s: status %d, want %d", tc.kind, got, tc.status)
		}
	}
	// A cut stream is the stream's error after the events before the cut.
	_, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Endpoint: "/v1/responses", Kind: sim.FaultCutStream, AfterChunks: 3}}})
	c := simtest.Client(url)
	stream := c.Responses.NewStreaming(ctx, params)
	n := 0
	for stream.Next() {
		n++
	}
	if stream.Err() == nil || n != 3 {
		t.Errorf("cut stream: %d events, err %v; want 3 events, then an error", n, stream.Err())
	}
	// A stream error arrives as events the SDK decodes (its data has no
	// top-level "error", which the SDK would raise): the error event,
	// then response.failed with the response's error.
	_, url = testkit.NewSim(t, sim.Config{Faults: []sim.Fault{{Endpoint: "/v1/responses", Kind: sim.FaultStreamError, AfterChunks: 3}}})
	c = simtest.Client(url)
	stream = c.Responses.NewStreaming(ctx, params)
	var types []string
	var failed responses.Response
	for stream.Next() {
		e := stream.Current()
		types = append(types, e.Type)
		if e.Type == "response.failed" {
			failed = e.Response
		}
	}
	if stream.Err() != nil || len(types) != 5 || types[3] != "error" || types[4] != "response.failed" || failed.Error.Code != "server_error" {
		t.Errorf("stream error: events %v, failed %+v, err %v", types, failed.Error, stream.Err())
	}
}
