package realtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/voxgate/voxgate/internal/aierr"
)

// MaxEventBytes caps one server event read from a sideband: session.updated
// with every tool's schema is the largest, a few tens of kilobytes.
const MaxEventBytes = 1 << 20

// writeBuffers is shared by every sideband: a held session writes a few
// events a minute, so a buffer per socket would be memory spent idle.
var writeBuffers = &sync.Pool{}

// Sideband is the gateway's WebSocket on a live call: every server event
// the call emits comes in, client events go out. Read from one goroutine;
// Send is safe from any.
type Sideband struct {
	conn *websocket.Conn
	wmu  sync.Mutex
}

// Attach opens the sideband socket on callID with the server key. A call
// the provider does not know gives ErrCallNotFound; other refusals are
// normalized.
func (c *Client) Attach(ctx context.Context, callID string) (*Sideband, error) {
	if !callIDRE.MatchString(callID) {
		return nil, fmt.Errorf("realtime: call id %q", callID)
	}
	u := "ws" + strings.TrimPrefix(c.baseURL, "http") + "/realtime?call_id=" + url.QueryEscape(callID)
	d := websocket.Dialer{HandshakeTimeout: c.timeout, ReadBufferSize: 1024, WriteBufferPool: writeBuffers,
		Proxy: http.ProxyFromEnvironment}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+c.apiKey)
	conn, res, err := d.DialContext(ctx, u, h)
	if res != nil && res.Body != nil {
		_ = res.Body.Close()
	}
	switch {
	case err == nil:
		conn.SetReadLimit(MaxEventBytes)
		return &Sideband{conn: conn}, nil
	case res != nil && res.StatusCode == http.StatusNotFound:
		return nil, ErrCallNotFound
	case res != nil:
		cause := fmt.Errorf("realtime: attach to %s: %w (status %d)", callID, err, res.StatusCode)
		return nil, aierr.Refusal(res.StatusCode, "", "", "", res.Header, time.Now()).APIError(cause)
	}
	return nil, normalize(ctx, "attach to "+callID, err)
}

// AttachRetry attaches, retrying ErrCallNotFound with backoff for up to
// within: attaching right after a call is created has been seen to fail
// that way. Other errors are not retried.
func (c *Client) AttachRetry(ctx context.Context, callID string, within time.Duration) (*Sideband, error) {
	deadline := time.Now().Add(within)
	wait := 50 * time.Millisecond
	for {
		sb, err := c.Attach(ctx, callID)
		if !errors.Is(err, ErrCallNotFound) || time.Now().Add(wait).After(deadline) {
			return sb, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, time.Second)
	}
}

// Read returns the next server event. An error ends the socket: a
// *websocket.CloseError when the provider closed it with a frame.
func (s *Sideband) Read() ([]byte, error) {
	for {
		typ, data, err := s.conn.ReadMessage()
		if err != nil || typ == websocket.TextMessage {
			return data, err
		}
	}
}

// Send writes one client event, already JSON.
func (s *Sideband) Send(event []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return s.conn.WriteMessage(websocket.TextMessage, event)
}

// Close sends a normal close frame and closes the connection, which ends a
// Read in progress.
func (s *Sideband) Close() error {
	s.wmu.Lock()
	_ = s.conn.SetWriteDeadline(time.Now().Add(time.Second))
	_ = s.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	s.wmu.Unlock()
	return s.conn.Close()
}

// CloseCode is the close frame's code of a Read error, or 0 when the
// connection ended without one (a dropped connection).
func CloseCode(err error) int {
	var ce *websocket.CloseError
	if errors.As(err, &ce) && ce.Code != websocket.CloseAbnormalClosure {
		return ce.Code
	}
	return 0
}
