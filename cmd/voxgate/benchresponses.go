package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/capacity"
)

// The Responses case of voxgate bench: time to the first
// response.output_text.delta of a streamed POST /v1/responses through
// the gateway, beside the same request sent straight to a mock that
// answers /v1/responses as the completions mock answers its route (the
// same words, capacity.MockChunks deltas capacity.MockGap apart). The
// gateway itself calls the completions mock upstream (its OpenAI target
// speaks Chat Completions), so the figure is what the endpoint adds, as
// the completions case's is.

// respMock serves POST /v1/responses streamed, for the direct baseline.
type respMock struct {
	srv *http.Server
	URL string // ends in /v1
}

func startRespMock() (*respMock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", serveMockResponse)
	m := &respMock{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, URL: "http://" + ln.Addr().String() + "/v1"}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *respMock) Close() error { return m.srv.Close() }

// serveMockResponse streams the mock's answer as the Responses API's
// events, the fewest a client needs: created, the deltas, completed.
func serveMockResponse(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	seq := 0
	send := func(typ, rest string) {
		fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d%s}\n\n", typ, typ, seq, rest)
		seq++
		if fl != nil {
			fl.Flush()
		}
	}
	send("response.created", `,"response":{"id":"resp_mock","object":"response","status":"in_progress","output":[]}`)
	for i := range capacity.MockChunks {
		if i > 0 {
			select {
			case <-time.After(capacity.MockGap):
			case <-r.Context().Done():
				return
			}
		}
		send("response.output_text.delta", `,"item_id":"msg_mock","output_index":0,"content_index":0,"delta":"word "`)
	}
	send("response.completed", `,"response":{"id":"resp_mock","object":"response","status":"completed","output":[],`+
		`"usage":{"input_tokens":12,"output_tokens":10,"total_tokens":22}}`)
}

// runResponses sends l as streamed Responses requests to t (a
// /v1/responses URL) and times each to its first text delta, as
// capacity.Run does a completion to its first content. A request that is
// not a 200 ending in response.completed is counted, not timed.
func runResponses(ctx context.Context, client *http.Client, t capacity.Target, l capacity.Load) capacity.Result {
	return capacity.RunWith(ctx, l, func(ctx context.Context, c, n int) (time.Duration, error) {
		return oneResponse(ctx, client, t, l, c, n)
	})
}

// oneResponse sends client c's nth request and times it to its first
// response.output_text.delta.
func oneResponse(ctx context.Context, client *http.Client, t capacity.Target, l capacity.Load, c, n int) (time.Duration, error) {
	body := fmt.Sprintf(`{"model":%q,"stream":true,"store":false,"input":"Suggest a quick lunch, please (%d.%d)."}`, l.Model, c, n)
	return timeEvents(ctx, client, t, c, body, "response.output_text.delta", "response.completed")
}

// timeEvents sends client c's body to t and times the answer, a stream of
// typed events ("data: {"type":…}" lines), to its first event of type
// first; it fails unless an event of type done ends it.
func timeEvents(ctx context.Context, client *http.Client, t capacity.Target, c int, body, first, done string) (time.Duration, error) {
	resp, began, err := capacity.Send(ctx, client, t, c, body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	is := func(typ string) func([]byte) bool {
		want := []byte(`"type":"` + typ + `"`)
		return func(line []byte) bool { return bytes.HasPrefix(line, []byte("data: ")) && bytes.Contains(line, want) }
	}
	return capacity.TimeStream(resp.Body, began, is(first), is(done))
}

// benchResponses is the Responses case for l, run right after the
// completions case of the same load: direct to the mock, a warm-up, then
// through the gateway.
func benchResponses(ctx context.Context, client *http.Client, direct, via capacity.Target, l capacity.Load, warmup time.Duration) *respRow {
	row := &respRow{direct: runResponses(ctx, client, direct, l)}
	w := l
	w.Duration = warmup
	runResponses(ctx, client, via, w)
	row.gateway = runResponses(ctx, client, via, l)
	return row
}

// respRow is what the Responses case measured.
type respRow struct {
	direct, gateway capacity.Result
}

// respGateway is the Responses case's run through the gateway, if any.
func (r benchRow) respGateway() capacity.Result {
	if r.resp == nil {
		return capacity.Result{}
	}
	return r.resp.gateway
}

// printRespRow reports the Responses case beside the completions case
// of the same row: time to first delta added at p50 and p99, and each
// endpoint's added time over the other's.
func printRespRow(w io.Writer, r benchRow) {
	if r.resp == nil {
		return
	}
	g, d := r.resp.gateway, r.resp.direct
	fmt.Fprintf(w, "  responses         requests/s gateway %.0f, mock direct %.0f; failed %d", g.PerSecond(), d.PerSecond(), g.Failed)
	if g.FirstError != "" {
		fmt.Fprintf(w, " (first: %s)", g.FirstError)
	}
	fmt.Fprintln(w)
	for _, q := range []float64{0.5, 0.99} {
		added := g.Quantile(q) - d.Quantile(q)
		compl := r.gateway.Quantile(q) - r.direct.Quantile(q)
		fmt.Fprintf(w, "  first delta p%-3.0f  gateway %s, direct %s, added %s; completions added %s (responses/completions %.2f)\n",
			q*100, ms(g.Quantile(q)), ms(d.Quantile(q)), ms(added), ms(compl), ratio(float64(added), float64(compl)))
	}
}
