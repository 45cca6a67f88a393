// Package sse writes one stream of server-sent events (DESIGN §7): the
// chat turn's events and the OpenAI-compatible chunks both go out through
// it, with keep-alive pings, a bounded write and one last line on an end.
package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/voxgate/voxgate/internal/heartbeat"
)

// Errors a Writer returns once it can no longer write.
var (
	// ErrGone: the client went away (the request context ended, or a write
	// failed).
	ErrGone = errors.New("sse: client gone")
	// ErrClosed: Close was called.
	ErrClosed = errors.New("sse: writer closed")
)

// writeTimeout bounds one event's write. A stream route has no server write
// deadline (it may rightly run for minutes), so without this a client that
// stops reading but keeps its connection open would hold a Send, and the
// Close waiting behind it, until the kernel gave up.
const writeTimeout = 10 * time.Second

// Writer writes one event stream. It is safe for concurrent use: a ping
// goroutine may run beside the handler's Sends.
type Writer struct {
	rw   http.ResponseWriter
	rc   *http.ResponseController
	gone <-chan struct{}
	// writeTimeout is the package's, but a test may shorten it.
	writeTimeout time.Duration

	mu     sync.Mutex
	n      int   // events sent; the last id
	err    error // set once nothing more may be written
	buf    bytes.Buffer
	closed bool
	broken bool // a write failed: the connection is unusable
}

// NewWriter starts an event stream on w: it sets the stream headers,
// answers 200 and flushes, so the client sees the stream open at once. It
// fails, having written nothing, if w cannot flush.
func NewWriter(w http.ResponseWriter, r *http.Request) (*Writer, error) {
	// Probe for a flusher before touching the response, so a writer that
	// cannot stream still leaves the handler free to answer a JSON error.
	if !canFlush(w) {
		return nil, fmt.Errorf("sse: %T cannot flush", w)
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return nil, fmt.Errorf("%w: start stream: %v", ErrGone, err)
	}
	return &Writer{rw: w, rc: rc, gone: r.Context().Done(), writeTimeout: writeTimeout}, nil
}

// canFlush reports whether w, or a writer it wraps, can flush, the way
// http.ResponseController looks for one.
func canFlush(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }, http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// Send writes one event, "id: <n>\nevent: <type>\ndata: <json>\n\n", with
// n counting from 1, and flushes it. The data is v marshalled as a JSON
// object with "type": eventType added; v must marshal to an object (or be
// nil, for {"type": …}), and a "type" it carries must equal eventType.
// eventType must match ^[a-z][a-z0-9_.]*$ (the chat turn's names and the
// Responses API's dotted ones, response.output_text.delta); nothing in
// it can end a line or a field. Once the client has gone or Close was
// called, Send writes nothing and returns ErrGone or ErrClosed.
func (w *Writer) Send(eventType string, v any) error {
	data, err := eventData(eventType, v)
	if err != nil {
		return err
	}
	return w.send(eventType, data)
}

// Data writes one frame of data alone, "data: <data>\n\n", with no id
// and no event name: the form of OpenAI's streams, whose clients read
// each data line as a chunk. Otherwise it is Send.
func (w *Writer) Data(data []byte) error { return w.send("", data) }

func (w *Writer) send(eventType string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	return w.sendLocked(eventType, data)
}

// SendLast writes one last event even though the request's context has
// ended, then ends the writer as Close does for Send. It is for a request
// the server cancels while its connection is still open (a shutdown past
// its timeout leaves connections open for a moment), so the client learns
// why the stream ends. It writes nothing after Close, after a failed
// write, or after an earlier SendLast.
func (w *Writer) SendLast(eventType string, v any) error {
	data, err := eventData(eventType, v)
	if err != nil {
		return err
	}
	return w.last(eventType, data)
}

// DataLast is Data's SendLast: one last frame of data alone.
func (w *Writer) DataLast(data []byte) error { return w.last("", data) }

func (w *Writer) last(eventType string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.broken || errors.Is(w.err, ErrClosed) {
		return ErrClosed
	}
	if err := w.sendLocked(eventType, data); err != nil {
		return err
	}
	w.err = ErrClosed
	return nil
}

// sendLocked writes one event's frame and counts it; with no eventType,
// a frame of data alone, which has no id to count.
func (w *Writer) sendLocked(eventType string, data []byte) error {
	w.buf.Reset()
	if eventType != "" {
		w.buf.WriteString("id: ")
		w.buf.WriteString(strconv.Itoa(w.n + 1))
		w.buf.WriteString("\nevent: ")
		w.buf.WriteString(eventType)
		w.buf.WriteByte('\n')
	}
	writeData(&w.buf, data)
	w.buf.WriteByte('\n')
	if err := w.writeLocked(); err != nil {
		return err
	}
	if eventType != "" {
		w.n++
	}
	return nil
}

// Ping writes a ": ping" comment, which keeps proxies from timing out an
// idle stream and surfaces a dead client as a write error.
func (w *Writer) Ping() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	w.buf.Reset()
	w.buf.WriteString(": ping\n\n")
	return w.writeLocked()
}

// KeepAlive pings every period until ctx ends, the client goes, a ping
// fails, or stop is called. The pings run on a timer (package heartbeat),
// not a goroutine of their own. stop waits for a ping in progress, so none
// is written after it returns; it is safe to call more than once.
func (w *Writer) KeepAlive(ctx context.Context, every time.Duration) (stop func()) {
	return heartbeat.Start(ctx, every, func(context.Context) bool { return w.Ping() == nil })
}

// Gone is closed when the client goes away (the request context ends).
func (w *Writer) Gone() <-chan struct{} { return w.gone }

// Close marks the writer done: nothing is written after it returns. It
// waits for a write in progress (bounded by writeTimeout) and lifts the
// per-event write deadline, which would otherwise cut off the server's own
// closing write if the handler lingers: call it (defer it) in every handler
// that made a Writer. It is safe to call more than once and beside Send.
func (w *Writer) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	if w.err == nil {
		w.err = ErrClosed
	}
	_ = w.rc.SetWriteDeadline(time.Time{})
}

// Events is how many events were sent.
func (w *Writer) Events() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func (w *Writer) usableLocked() error {
	if w.err != nil {
		return w.err
	}
	select {
	case <-w.gone:
		w.err = ErrGone
		return w.err
	default:
		return nil
	}
}

// writeLocked writes and flushes w.buf. A failed write leaves the stream in
// an unknown state mid-frame, so it ends the writer.
func (w *Writer) writeLocked() error {
	// Not every ResponseWriter supports deadlines (recorders in tests); the
	// write is then unbounded, as it would be without this writer.
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.writeTimeout))
	if _, err := w.rw.Write(w.buf.Bytes()); err != nil {
		w.err, w.broken = ErrGone, true
		return fmt.Errorf("%w: %v", ErrGone, err)
	}
	if err := w.rc.Flush(); err != nil {
		w.err, w.broken = ErrGone, true
		return fmt.Errorf("%w: %v", ErrGone, err)
	}
	return nil
}

// validEventType holds a name to ^[a-z][a-z0-9_.]*$: a frame's event
// line cannot be broken by it (no CR, LF or colon), and it is the same
// name in the data's "type", which is copied unescaped.
func validEventType(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// eventData marshals v as a JSON object with "type" first.
func eventData(eventType string, v any) ([]byte, error) {
	if !validEventType(eventType) {
		return nil, fmt.Errorf("sse: event type %q: want [a-z][a-z0-9_.]*", eventType)
	}
	head := `{"type":"` + eventType + `"`
	if v == nil {
		return []byte(head + "}"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sse: %s event: %w", eventType, err)
	}
	if string(b) == "null" {
		return []byte(head + "}"), nil
	}
	// json.Marshal compacts (even a MarshalJSON's output), so an object
	// starts with '{'; decoding the keys both proves it is an object and
	// finds a "type" it already carries.
	var keys map[string]json.RawMessage
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &keys) != nil {
		return nil, fmt.Errorf("sse: %s event: data must be a JSON object, got %.40s", eventType, b)
	}
	if t, ok := keys["type"]; ok {
		var s string
		if json.Unmarshal(t, &s) != nil || s != eventType {
			return nil, fmt.Errorf("sse: %s event: data has type %s", eventType, t)
		}
		return b, nil
	}
	if len(keys) == 0 {
		return []byte(head + "}"), nil
	}
	return append([]byte(head+","), b[1:]...), nil
}

// writeData writes data as "data:" lines. Compact JSON has no line breaks,
// but one would end the field early and let the rest be read as fields of
// its own, so any CR, LF or CRLF starts a new "data:" line, which a client
// joins back with "\n".
func writeData(buf *bytes.Buffer, data []byte) {
	for {
		buf.WriteString("data: ")
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			buf.Write(data)
			buf.WriteByte('\n')
			return
		}
		buf.Write(data[:i])
		buf.WriteByte('\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}
