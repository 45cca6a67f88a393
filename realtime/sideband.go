package realtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	wire "github.com/coder/websocket"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/realtime"

	"github.com/voxgate/voxgate/internal/aierr"
)

// MaxEventBytes caps one server event read from a sideband: session.updated
// with every tool's schema is the largest, a few tens of kilobytes.
const MaxEventBytes = 1 << 20

// maxBufferedBytes bounds the events openai-go reads ahead of the holder:
// the holder takes each at once, so a backlog this deep means it is stuck,
// and the socket is failed rather than left to grow.
const maxBufferedBytes = 16 * MaxEventBytes

// Sideband is the gateway's WebSocket on a live call, opened through
// openai-go's Realtime.Connect: every server event the call emits comes
// in, client events go out. Read from one goroutine; Send is safe from any.
type Sideband struct {
	conn *realtime.RealtimeConnection
}

// Attach opens the sideband socket on callID with the server key and
// openai-go's own headers. A call the provider does not know gives
// ErrCallNotFound; other refusals go through the one classifier.
func (c *Client) Attach(ctx context.Context, callID string) (*Sideband, error) {
	if !callIDRE.MatchString(callID) {
		return nil, fmt.Errorf("realtime: call id %q", callID)
	}
	var conn *realtime.RealtimeConnection
	err := c.dial(ctx, "attach to "+callID, ErrCallNotFound, func(ctx context.Context, hc *http.Client) (err error) {
		conn, err = c.oai.Realtime.Connect(ctx,
			realtime.RealtimeConnectionOptions{MaxMessageBytes: MaxEventBytes, MaxBufferedBytes: maxBufferedBytes, CloseTimeout: time.Second},
			option.WithQuery("call_id", callID), option.WithHTTPClient(hc))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Sideband{conn: conn}, nil
}

// dial opens a sideband WebSocket through connect, under the client's
// timeout, with an HTTP client that keeps a refused upgrade's status,
// headers and body (openai-go reports only that the handshake failed). A
// 404 is notFound; other refusals go through the one classifier.
func (c *Client) dial(ctx context.Context, doing string, notFound error, connect func(context.Context, *http.Client) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	base := c.http.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hs := &handshake{base: base}
	client := *c.http
	client.Transport = hs
	err := connect(ctx, &client)
	if err == nil {
		return nil
	}
	status, header, body := hs.refusal()
	switch {
	case status == http.StatusNotFound:
		return notFound
	case status != 0:
		var e struct {
			Error struct{ Type, Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(body, &e) // a body that is not an error object classifies by status alone
		cause := fmt.Errorf("realtime: %s: status %d: %w", doing, status, err)
		return aierr.Refusal(status, e.Error.Type, e.Error.Code, e.Error.Message, header, time.Now()).APIError(cause)
	}
	return normalize(ctx, doing, err)
}

// handshake keeps the provider's answer to an upgrade it refused: openai-go
// reports a failed handshake without its status, and a 404 (no such call
// yet) must be told apart from a refusal.
type handshake struct {
	base   http.RoundTripper
	mu     sync.Mutex
	status int
	header http.Header
	body   []byte
}

func (h *handshake) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := h.base.RoundTrip(r)
	if err != nil || res.StatusCode == http.StatusSwitchingProtocols {
		return res, err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	h.mu.Lock()
	h.status, h.header, h.body = res.StatusCode, res.Header.Clone(), body
	h.mu.Unlock()
	return res, nil
}

func (h *handshake) refusal() (int, http.Header, []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status, h.header, h.body
}

// AttachRetry attaches, retrying ErrCallNotFound with backoff for up to
// within: attaching right after a call is created has been seen to fail
// that way. Other errors are not retried.
func (c *Client) AttachRetry(ctx context.Context, callID string, within time.Duration) (*Sideband, error) {
	return retryNotFound(ctx, within, ErrCallNotFound, func() (*Sideband, error) { return c.Attach(ctx, callID) })
}

// retryNotFound calls attach until it gives something other than notFound
// or the next wait would end past within; the wait doubles from 50 ms to 1 s.
func retryNotFound[T any](ctx context.Context, within time.Duration, notFound error, attach func() (T, error)) (T, error) {
	deadline := time.Now().Add(within)
	wait := 50 * time.Millisecond
	for {
		sb, err := attach()
		if !errors.Is(err, notFound) || time.Now().Add(wait).After(deadline) {
			return sb, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			var zero T
			return zero, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, time.Second)
	}
}

// Read returns the next server event. An error ends the socket: one
// carrying the close frame's code (CloseCode) when the provider closed it.
func (s *Sideband) Read() ([]byte, error) {
	return s.conn.RecvRaw(context.Background())
}

// Send writes one client event, already JSON.
func (s *Sideband) Send(event []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.conn.SendRaw(ctx, event)
}

// Close sends a normal close frame and closes the connection, which ends a
// Read in progress.
func (s *Sideband) Close() error {
	return s.conn.Close()
}

// CloseCode is the close frame's code of a Read error, or 0 when the
// connection ended without one (a dropped connection).
func CloseCode(err error) int {
	if code := wire.CloseStatus(err); code != -1 && code != wire.StatusAbnormalClosure {
		return int(code)
	}
	return 0
}
