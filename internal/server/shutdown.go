package server

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// shutdownGrace is how long requests get to answer once their contexts are
// cancelled: long enough to write a 503, short enough to keep Shutdown
// bounded.
const shutdownGrace = time.Second

// Shutdown marks s as draining, then stops srv, which must serve s with
// BaseContext set to s.BaseContext. In-flight requests get timeout to
// finish; any still running then have their contexts cancelled with
// ErrShuttingDown, so database and provider calls abort and the requests
// answer 503; after shutdownGrace the remaining connections are closed. It
// returns within timeout + shutdownGrace whatever the requests wait on.
func (s *Server) Shutdown(srv *http.Server, timeout time.Duration) error {
	s.Drain()
	defer s.cancelRequests(ErrShuttingDown)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
	}
	s.cancelRequests(ErrShuttingDown)
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		stop()
		<-done
		_ = srv.Close()
	}
	return fmt.Errorf("server: requests still running after the %s shutdown timeout were cancelled", timeout)
}
