package simtest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gorilla/websocket"
)

// Socket is a Realtime WebSocket client: GET /v1/realtime?model=… or a
// sideband on ?call_id=….
type Socket struct {
	Conn   *websocket.Conn
	events chan Event
	done   chan struct{}
	err    error
}

// EventStream is what Caller and Socket share: server events in, client
// events out.
type EventStream interface {
	Next(ctx context.Context) (Event, error)
	Send(v any) error
}

// DialSocket opens /v1/realtime with query (e.g. "call_id=rtc_…") on the
// simulator (or gateway) at baseURL, an http:// URL. On a refused handshake
// the response is returned with the error.
func DialSocket(ctx context.Context, baseURL, key, query string) (*Socket, *http.Response, error) {
	url := "ws" + strings.TrimPrefix(baseURL, "http") + "/v1/realtime?" + query
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, url, h)
	if err != nil {
		return nil, resp, err
	}
	s := &Socket{Conn: conn, events: make(chan Event, 4096), done: make(chan struct{})}
	go s.read()
	return s, resp, nil
}

func (s *Socket) read() {
	defer close(s.done)
	for {
		_, data, err := s.Conn.ReadMessage()
		if err != nil {
			s.err = err
			return
		}
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(data, &head)
		select {
		case s.events <- Event{Type: head.Type, Raw: data}:
		default:
		}
	}
}

// Next returns the next server event, or ErrClosed once the socket closed.
func (s *Socket) Next(ctx context.Context) (Event, error) {
	select {
	case e := <-s.events:
		return e, nil
	case <-s.done:
		select {
		case e := <-s.events:
			return e, nil
		default:
			return Event{}, ErrClosed
		}
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// Err is the read error that ended the socket (a *websocket.CloseError for
// a clean close); valid once Next returned ErrClosed.
func (s *Socket) Err() error {
	<-s.done
	return s.err
}

// Send writes a client event.
func (s *Socket) Send(v any) error { return s.Conn.WriteJSON(v) }

// SendRaw writes bytes as they are.
func (s *Socket) SendRaw(b []byte) error { return s.Conn.WriteMessage(websocket.TextMessage, b) }

// Close closes the socket.
func (s *Socket) Close() { _ = s.Conn.Close() }

// Until reads events until one of type typ, returning it and every event
// read before it.
func Until(ctx context.Context, s EventStream, typ string) (Event, []Event, error) {
	var seen []Event
	for {
		e, err := s.Next(ctx)
		if err != nil {
			return Event{}, seen, err
		}
		if e.Type == typ {
			return e, seen, nil
		}
		seen = append(seen, e)
	}
}
