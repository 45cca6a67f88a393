package sse

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
)

func mustWriter(t *testing.T) (*Writer, *httptest.ResponseRecorder) {
	t.Helper()
	rec := httptest.NewRecorder()
	w, err := NewWriter(rec, httptest.NewRequest(http.MethodPost, "/v1/chat", nil))
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	t.Cleanup(w.Close)
	return w, rec
}

func TestNewWriterHeadersAndFlush(t *testing.T) {
	t.Parallel()
	_, rec := mustWriter(t)
	if rec.Code != http.StatusOK {
		t.Errorf("status: got %d, want 200", rec.Code)
	}
	if !rec.Flushed {
		t.Error("NewWriter did not flush")
	}
	for k, want := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s: got %q, want %q", k, got, want)
		}
	}
}

// noFlush hides the recorder's Flush.
type noFlush struct{ rw http.ResponseWriter }

func (n noFlush) Header() http.Header         { return n.rw.Header() }
func (n noFlush) Write(b []byte) (int, error) { return n.rw.Write(b) }
func (n noFlush) WriteHeader(code int)        { n.rw.WriteHeader(code) }

// unwrapper hides Flush but lets ResponseController reach it, as the
// server's middleware does.
type unwrapper struct{ noFlush }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.rw }

func TestNewWriterNeedsAFlusher(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat", nil)
	rec := httptest.NewRecorder()
	if _, err := NewWriter(noFlush{rec}, r); err == nil {
		t.Fatal("NewWriter on a writer that cannot flush: got nil error")
	}
	if rec.Header().Get("Content-Type") != "" || rec.Body.Len() != 0 {
		t.Errorf("a refused writer was touched: headers %v, body %q", rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	if _, err := NewWriter(unwrapper{noFlush{rec}}, r); err != nil {
		t.Fatalf("NewWriter through Unwrap: %v", err)
	}
	if !rec.Flushed {
		t.Error("NewWriter through Unwrap did not flush")
	}
}

func TestSendFrames(t *testing.T) {
	t.Parallel()
	w, rec := mustWriter(t)
	sends := []struct {
		typ  string
		v    any
		data string
	}{
		{"session", map[string]string{"session_id": "s1"}, `{"type":"session","session_id":"s1"}`},
		{"content", struct {
			Content string `json:"content"`
		}{"line one\nline two\r\n<b>"}, `{"type":"content","content":"line one\nline two\r\n\u003cb\u003e"}`},
		{"stream_complete", nil, `{"type":"stream_complete"}`},
		{"stream_complete", struct{}{}, `{"type":"stream_complete"}`},
		{"done", map[string]any{"type": "done", "response": 1}, `{"response":1,"type":"done"}`},
		{"error", (*struct{})(nil), `{"type":"error"}`},
	}
	for _, s := range sends {
		if err := w.Send(s.typ, s.v); err != nil {
			t.Fatalf("Send(%q): %v", s.typ, err)
		}
	}
	if got := w.Events(); got != len(sends) {
		t.Errorf("Events: got %d, want %d", got, len(sends))
	}
	frames, rest := parseFrames(t, rec.Body.String())
	if rest != "" || len(frames) != len(sends) {
		t.Fatalf("got %d frames and rest %q, want %d frames:\n%s", len(frames), rest, len(sends), rec.Body)
	}
	for i, f := range frames {
		want := frame{id: strconv.Itoa(i + 1), event: sends[i].typ, data: sends[i].data, hasData: true}
		if f != want {
			t.Errorf("frame %d: got %+v, want %+v", i, f, want)
		}
	}
	if !strings.HasPrefix(rec.Body.String(), "id: 1\nevent: session\ndata: {") {
		t.Errorf("wire shape: got %q", rec.Body.String())
	}
}

func TestSendRefuses(t *testing.T) {
	t.Parallel()
	w, rec := mustWriter(t)
	cases := []struct {
		name, typ string
		v         any
	}{
		{"empty type", "", nil},
		{"upper case", "Content", nil},
		{"hyphen", "stream-complete", nil},
		{"newline in type", "content\ndata: x", nil},
		{"leading digit", "2v", nil},
		{"leading dot", ".created", nil},
		{"colon", "response:created", nil},
		{"string data", "content", "hello"},
		{"array data", "content", []int{1}},
		{"number data", "content", 3},
		{"other type field", "content", map[string]string{"type": "done"}},
		{"non-string type field", "content", map[string]int{"type": 1}},
		{"unmarshalable", "content", map[string]any{"f": func() {}}},
	}
	for _, c := range cases {
		if err := w.Send(c.typ, c.v); err == nil {
			t.Errorf("%s: Send(%q, %v): got nil error", c.name, c.typ, c.v)
		}
	}
	if rec.Body.Len() != 0 || w.Events() != 0 {
		t.Errorf("refused sends wrote %q (events %d)", rec.Body, w.Events())
	}
	if err := w.Send("content", map[string]string{"content": "ok"}); err != nil {
		t.Fatalf("Send after refusals: %v", err)
	}
	if f, _ := parseFrames(t, rec.Body.String()); len(f) != 1 || f[0].id != "1" {
		t.Errorf("after refusals the first event should be id 1: %+v", f)
	}
}

func TestCloseStopsWrites(t *testing.T) {
	t.Parallel()
	w, rec := mustWriter(t)
	if err := w.Send("content", nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w.Close()
	n := rec.Body.Len()
	if err := w.Send("content", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: got %v, want ErrClosed", err)
	}
	if err := w.Ping(); !errors.Is(err, ErrClosed) {
		t.Errorf("Ping after Close: got %v, want ErrClosed", err)
	}
	if rec.Body.Len() != n || w.Events() != 1 {
		t.Errorf("wrote after Close: body %q, events %d", rec.Body, w.Events())
	}
}

// TestConcurrentSendPingClose runs sends, pings and a Close at once: under
// -race, and every byte written still parses into whole frames with ids in
// order.
func TestConcurrentSendPingClose(t *testing.T) {
	t.Parallel()
	w, rec := mustWriter(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if g == 0 {
					_ = w.Ping()
				} else {
					_ = w.Send("content", map[string]string{"content": strings.Repeat("x\n", i)})
				}
			}
		}()
	}
	// Close once the writers are under way, not after a guessed pause.
	testkit.Eventually(t, context.Background(), "a first event sent", func() bool { return w.Events() > 0 })
	w.Close()
	wg.Wait()
	w.mu.Lock()
	body := rec.Body.String()
	w.mu.Unlock()
	frames, rest := parseFrames(t, body)
	if rest != "" {
		t.Fatalf("a frame was cut: rest %q", rest)
	}
	id := 0
	for _, f := range frames {
		if f.comment != "" {
			if f.comment != "ping" {
				t.Errorf("comment: got %q", f.comment)
			}
			continue
		}
		id++
		if f.id != strconv.Itoa(id) || !json.Valid([]byte(f.data)) {
			t.Errorf("frame %+v: want id %d and valid JSON", f, id)
		}
	}
	if id != w.Events() {
		t.Errorf("frames: got %d events, Events() = %d", id, w.Events())
	}
}

func TestKeepAlivePings(t *testing.T) {
	t.Parallel()
	w, rec := mustWriter(t)
	stop := w.KeepAlive(context.Background(), 5*time.Millisecond)
	testkit.Eventually(t, context.Background(), "2 pings at a 5 ms period", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return strings.Count(rec.Body.String(), ": ping\n\n") >= 2
	})
	stop()
	stop()
	w.mu.Lock()
	n := rec.Body.Len()
	w.mu.Unlock()
	// measurement window: six periods in which a keep-alive that outlived
	// stop would ping; a correct one writes nothing however long the pause.
	time.Sleep(30 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	if rec.Body.Len() != n {
		t.Errorf("pinged after stop: %q", rec.Body.String()[n:])
	}
}

// TestClientDisconnect streams through a real server to a client that reads
// three events and hangs up: the handler's Send fails promptly, Gone is
// closed, and the keep-alive goroutine ends on its own.
func TestClientDisconnect(t *testing.T) {
	t.Parallel()
	type result struct {
		sent     int
		err      error
		gone     bool
		duration time.Duration
	}
	results := make(chan result, 1)
	var hungUp time.Time
	var hangMu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w, err := NewWriter(rw, r)
		if err != nil {
			t.Error(err)
			return
		}
		defer w.Close()
		stop := w.KeepAlive(r.Context(), time.Millisecond)
		defer stop()
		var res result
		for {
			if res.err = w.Send("content", map[string]string{"content": "tick"}); res.err != nil {
				break
			}
			res.sent++
			// measurement window: the stream's pace, a tick every 2 ms as a
			// live stream sends, so how soon Send fails after the hang-up is
			// measured against it.
			time.Sleep(2 * time.Millisecond)
		}
		hangMu.Lock()
		res.duration = time.Since(hungUp)
		hangMu.Unlock()
		select {
		case <-w.Gone():
			res.gone = true
		case <-time.After(time.Second):
		}
		results <- res
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for events := 0; events < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if strings.HasPrefix(line, "event: content") {
			events++
		}
	}
	hangMu.Lock()
	hungUp = time.Now()
	hangMu.Unlock()
	cancel()
	_ = resp.Body.Close()

	select {
	case res := <-results:
		if res.err == nil || res.sent < 3 {
			t.Errorf("handler: sent %d, err %v; want ≥ 3 and an error", res.sent, res.err)
		}
		if !errors.Is(res.err, ErrGone) {
			t.Errorf("Send after disconnect: got %v, want ErrGone", res.err)
		}
		if !res.gone {
			t.Error("Gone was not closed after the client left")
		}
		if res.duration > 2*time.Second {
			t.Errorf("Send noticed the disconnect after %s, want < 2 s", res.duration)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler kept sending 5 s after the client hung up")
	}
}

// TestStreamOverHTTP reads a stream through a real server and client: the
// headers and every frame. The handler lingers after Close past the
// per-event write deadline, as a handler persisting a turn may; the
// server's own closing write still goes out only because Close lifted it.
func TestStreamOverHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w, err := NewWriter(rw, r)
		if err != nil {
			t.Error(err)
			return
		}
		// Long enough for each write on a loaded machine; the linger
		// below is twice it, so the deadline has passed when the handler
		// returns unless Close lifted it.
		w.writeTimeout = 200 * time.Millisecond
		_ = w.Send("session", map[string]string{"session_id": "s1"})
		_ = w.Ping()
		_ = w.Send("content", map[string]string{"content": "a\nb"})
		_ = w.Send("done", nil)
		w.Close()
		// measurement window: the handler lingers past the 200 ms
		// per-event write deadline, which is what the test is about (see
		// above).
		time.Sleep(400 * time.Millisecond)
	}))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the stream: %v (read %q)", err, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type: got %q", ct)
	}
	frames, rest := parseFrames(t, string(body))
	if rest != "" || len(frames) != 4 || frames[1].comment != "ping" ||
		frames[2].data != `{"type":"content","content":"a\nb"}` || frames[3].id != "3" {
		t.Fatalf("got frames %+v, rest %q", frames, rest)
	}
}

// SendLast writes once after the request's context ended (Send no longer
// does), with the next id, and nothing after it, after Close, or after a
// failed write.
func TestSendLast(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		before  func(w *Writer)
		wantErr error
	}{
		{"context ended", func(*Writer) {}, nil},
		{"after SendLast", func(w *Writer) { _ = w.SendLast("error", nil) }, ErrClosed},
		{"after Close", func(w *Writer) { w.Close() }, ErrClosed},
		{"after a failed write", func(w *Writer) { w.mu.Lock(); w.broken = true; w.mu.Unlock() }, ErrClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			rec := httptest.NewRecorder()
			w, err := NewWriter(rec, httptest.NewRequest(http.MethodPost, "/v1/chat", nil).WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Send("session", nil); err != nil {
				t.Fatal(err)
			}
			cancel()
			if err := w.Send("content", nil); !errors.Is(err, ErrGone) {
				t.Fatalf("Send after the context ended: got %v, want ErrGone", err)
			}
			tc.before(w)
			before := rec.Body.Len()
			err = w.SendLast("error", map[string]string{"code": "UNAVAILABLE"})
			if !errors.Is(err, tc.wantErr) && err != tc.wantErr {
				t.Fatalf("SendLast: got %v, want %v", err, tc.wantErr)
			}
			wrote := rec.Body.String()[before:]
			if tc.wantErr == nil && !strings.HasPrefix(wrote, "id: 2\nevent: error\ndata: {\"type\":\"error\",\"code\":\"UNAVAILABLE\"}\n\n") {
				t.Fatalf("SendLast wrote %q, want event 2, error", wrote)
			}
			if tc.wantErr != nil && wrote != "" {
				t.Fatalf("SendLast wrote %q, want nothing", wrote)
			}
		})
	}
}
