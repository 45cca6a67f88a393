package server

import (
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/httpx"
)

// bodyDeadline bounds the reading of a request body: a client that promises
// a body and stalls is cut off after server.read_body_timeout instead of
// holding its connection. net/http lifts the deadline itself when the body
// has been read to its end (it then watches the connection for the client
// going away), so a handler that runs or streams longer is not cut off by
// it. A request without a body gets none: the server is already watching
// its connection, and a deadline there would cancel the request. A body cut
// off by it is answered 408 REQUEST_TIMEOUT (httpx.WatchBody).
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	timeout := s.cfg.Server.ReadBodyTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
			r = httpx.WatchBody(r)
		}
		next.ServeHTTP(w, r)
	})
}
