package capacity

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// TraceSink is an OTLP/HTTP trace endpoint that accepts every export and
// keeps only counts: the far end of a gateway's traces when the bench
// measures what tracing costs, cheap enough not to be the cost.
type TraceSink struct {
	srv            *http.Server
	URL            string // the OTLP base URL (exports go to URL/v1/traces)
	exports, bytes atomic.Int64
}

// StartTraceSink serves a sink on a loopback port until Close.
func StartTraceSink() (*TraceSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &TraceSink{URL: "http://" + ln.Addr().String()}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.exports.Add(1)
		s.bytes.Add(n)
		// An empty ExportTraceServiceResponse: no fields set, zero bytes.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Exports is how many exports arrived; Bytes their total size.
func (s *TraceSink) Exports() int64 { return s.exports.Load() }
func (s *TraceSink) Bytes() int64   { return s.bytes.Load() }

// Close stops the sink.
func (s *TraceSink) Close() error { return s.srv.Close() }
