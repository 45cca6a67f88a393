package llm

import (
	"net/http"
	"time"
)

// What every adapter starts from: the default waits and the transport.
// The rest of what they share is package adapt.

// DefaultTimeout bounds the wait for a provider's first event, and for
// each event after it (DESIGN §11: 10 s per provider).
const DefaultTimeout = 10 * time.Second

// DefaultReasoningFirstChunk bounds the wait for a reasoning model's first
// chunk: such a model is silent while it reasons, for 30 s or more at high
// effort, and DefaultTimeout would cut healthy turns.
const DefaultReasoningFirstChunk = 60 * time.Second

// AnswerTime is what a whole call (Request.Whole) is given beyond its
// first-content wait: its first byte is the whole answer, so the wait that
// bounds a stream's first content would cut any answer longer than a few
// sentences. The adapter's timer and the router's deadline both add it to
// their first-content wait. A whole call's stall shows only at this
// deadline: the price of asking for the answer in one response.
const AnswerTime = 60 * time.Second

// NewTransport is the provider calls' own transport: the default one with
// room for many streams at once. Over HTTP/1.1 every stream in flight holds
// a connection, so a pool of the default two idle connections would close
// and redial most of them under load; and a held stream's connection keeps
// its read and write buffers for as long as the model takes, so they are
// sized for server-sent events (small chunks) rather than bulk transfer.
// Over HTTP/2 (the real API, through TLS) streams share connections and
// the buffers are the HTTP/2 framer's. A caller that brings its own
// HTTPClient (a proxy, a private CA) may start from it.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no limit across hosts; per host below
	t.MaxIdleConnsPerHost = 256
	t.ReadBufferSize = 1 << 10
	t.WriteBufferSize = 1 << 10
	return t
}
