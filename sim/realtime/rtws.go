package realtime

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/voxgate/voxgate/sim/core"
)

// socketWriteTimeout bounds one event write; a socket stalled that long is
// cut, as the real API cuts stalled clients.
const socketWriteTimeout = 10 * time.Second

// insecureKeyProtocol is how browsers, which cannot set headers on a
// WebSocket, pass a key: as a subprotocol "openai-insecure-api-key.<key>".
const insecureKeyProtocol = "openai-insecure-api-key."

// Socket serves GET /v1/realtime: with ?call_id=rtc_… a sideband
// socket on an existing call, which sees the call's events and may send
// client events; with ?model=… a session of its own, events only.
func (s *Server) Socket(w http.ResponseWriter, r *http.Request) error {
	key := core.Bearer(r)
	if key == "" {
		key = protocolKey(r)
	}
	cfg, err := s.authorizeRealtime(key)
	if err != nil {
		return err
	}
	if wantsBeta(r) {
		refuseBetaSocket(w, r)
		return nil
	}
	q := r.URL.Query()
	var c *call
	var model string
	if id := q.Get("call_id"); id != "" {
		if err := s.requireAPIKey(key, "a sideband connection"); err != nil {
			return err
		}
		if c = s.rt.live(id); c == nil {
			return errCallNotFound(id)
		}
		model = c.model
		if f := s.env.Faults.Take(EndpointRealtime, model, FaultSidebandNotFound); f != nil {
			s.env.Stats.Fault(EndpointRealtime, f.Kind)
			return errCallNotFound(id) // the call exists, but the API does not know it yet
		}
	} else {
		if cfg == nil {
			if q.Get("model") == "" {
				return core.ErrMissingParam("model")
			}
			cfg = newSessionConfig(&s.rt.cfg)
		}
		if m := q.Get("model"); m != "" {
			cfg["model"] = m
		}
		model = cfg.view().model
		if err := s.oa.CheckModel(model); err != nil {
			return err
		}
	}
	dropAfter := -1
	if f := s.env.Faults.Take(EndpointRealtime, model, append(HTTPFaultKinds(), core.FaultSidebandDrop)...); f != nil {
		s.env.Stats.Fault(EndpointRealtime, f.Kind)
		if f.Kind != core.FaultSidebandDrop {
			_, err := s.oa.ResponseFault(r.Context(), f, false)
			return err
		}
		dropAfter = max(1, f.AfterChunks)
	}
	conn, err := Upgrader().Upgrade(w, r, nil)
	if err != nil {
		return nil // Upgrade has answered the client
	}
	conn.SetReadLimit(s.env.MaxBody)
	k := SocketSink(conn, c != nil)
	k.DropAfter = dropAfter

	var ss *rtSession
	if c != nil {
		ss = c.sess
	} else {
		ss = s.newRTSession(cfg, EndpointRealtime, nil)
		if !s.rt.startSocket(ss) {
			_ = conn.Close()
			return nil
		}
	}
	if !ss.Join(k) {
		_ = conn.Close()
		return nil
	}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			ss.Leave(k)
			return nil
		}
		if !ss.Submit(data, k) {
			return nil
		}
	}
}

func SocketSink(conn *websocket.Conn, sideband bool) *Sink {
	path := PathWebSocket
	if sideband {
		path = PathSideband
	}
	write := func(b []byte) error {
		_ = conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
		return conn.WriteMessage(websocket.TextMessage, b)
	}
	graceful := func(code int, text string) {
		msg := websocket.FormatCloseMessage(code, text)
		_ = conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		_ = conn.Close()
	}
	// gorilla's Close drops the TCP connection without a close frame: the
	// sideband_drop fault, and what a stalled socket gets.
	abrupt := func() { _ = conn.Close() }
	return newSink(path, write, graceful, abrupt)
}

// Upgrader accepts any origin (browsers connect straight to the API) and
// echoes the "realtime" subprotocol.
func Upgrader() *websocket.Upgrader {
	return &websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, Subprotocols: []string{"realtime"}}
}

// protocolKey reads a key passed as an "openai-insecure-api-key." subprotocol.
func protocolKey(r *http.Request) string {
	for _, p := range websocket.Subprotocols(r) {
		if k, ok := strings.CutPrefix(p, insecureKeyProtocol); ok {
			return k
		}
	}
	return ""
}

// betaCloseCode is the close code the API ends a beta-shaped socket with,
// after its error event.
const betaCloseCode = 4000

// refuseBetaSocket accepts the upgrade, sends the beta_api_shape_disabled
// error event and closes the socket with 4000, as the API does with a
// client still speaking the beta protocol.
func refuseBetaSocket(w http.ResponseWriter, r *http.Request) {
	conn, err := Upgrader().Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	apiErr := errBetaShape()
	_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
	if b, err := json.Marshal(errorEvent(apiErr, "")); err == nil {
		_ = conn.WriteMessage(websocket.TextMessage, b)
	}
	msg := websocket.FormatCloseMessage(betaCloseCode, apiErr.Code)
	_ = conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
}
