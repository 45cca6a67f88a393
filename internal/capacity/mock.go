// Package capacity measures what one request costs the gateway and its
// PostgreSQL: it drives a gateway and a neutral mock provider with the
// same load, and reads latency, throughput and CPU per request from the
// outside (voxgate bench, docs/capacity.md).
package capacity

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Mock is a neutral stand-in for an OpenAI-compatible provider: it answers
// every chat completion with the same fixed text, streamed as MockChunks
// chunks MockGap apart with usage, or whole at once. It does nothing a
// provider's cost would depend on, so the gateway's share of a request is
// what the gateway adds to calling it directly.
type Mock struct {
	srv *http.Server
	URL string // the base URL, ending in /v1
}

// The mock's answer: ten chunks 10 ms apart.
const (
	MockChunks = 10
	MockGap    = 10 * time.Millisecond
)

// StartMock serves the mock on a loopback port until Close.
func StartMock() (*Mock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", serveCompletion)
	mux.HandleFunc("POST /v1/realtime/client_secrets", serveClientSecret)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[]}`))
	})
	m := &Mock{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, URL: "http://" + ln.Addr().String() + "/v1"}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// Close stops the mock.
func (m *Mock) Close() error { return m.srv.Close() }

// mockUsage is the usage of every answer: a small prompt, ten words.
const mockUsage = `{"prompt_tokens":12,"completion_tokens":10,"total_tokens":22}`

func serveCompletion(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	model, _ := json.Marshal(req.Model)
	created := time.Now().Unix()
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-mock","object":"chat.completion","created":%d,"model":%s,`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":%s}`,
			created, model, strings.Repeat("word ", MockChunks), mockUsage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	chunk := func(choices, extra string) {
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-mock\",\"object\":\"chat.completion.chunk\",\"created\":%d,\"model\":%s,\"choices\":[%s]%s}\n\n",
			created, model, choices, extra)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`, "")
	for i := range MockChunks {
		if i > 0 {
			select {
			case <-time.After(MockGap):
			case <-r.Context().Done():
				return
			}
		}
		chunk(`{"index":0,"delta":{"content":"word "},"finish_reason":null}`, "")
	}
	chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`, "")
	if req.StreamOptions.IncludeUsage {
		chunk("", `,"usage":`+mockUsage)
	}
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
}

// serveClientSecret mints a Realtime client secret as the provider's
// POST /v1/realtime/client_secrets answers one (value, expires_at and the
// session), for voice sessions in direct mode. The secret is the same
// every time: nothing ever connects with it.
func serveClientSecret(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Session struct {
			Model string `json:"model"`
		} `json:"session"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	model, _ := json.Marshal(req.Session.Model)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"value":"ek_mock","expires_at":%d,"session":{"type":"realtime","object":"realtime.session","model":%s}}`,
		time.Now().Add(10*time.Minute).Unix(), model)
}
