package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/sim"
)

func runSim(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", "Runs the OpenAI-compatible simulator (Chat Completions; see docs/sim.md). Point a client at it with OPENAI_BASE_URL=http://ADDR/v1 and any non-empty key.", stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	cfgPath := fs.String("config", "", "simulator config file (YAML or JSON)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cfg sim.Config
	if *cfgPath != "" {
		var err error
		if cfg, err = sim.LoadConfig(*cfgPath); err != nil {
			return err
		}
	}
	cfg.Logger = newLogger(stderr)
	s, err := startSim(ctx, *addr, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "voxgate sim listening on %s (OPENAI_BASE_URL=%s/v1)\n", s.url, s.url)
	<-ctx.Done()
	return s.stop()
}

// runningSim is a simulator served on its own listener.
type runningSim struct {
	url  string
	sim  *sim.Server
	http *http.Server
	done chan error
}

// startSim serves a simulator on addr until stop.
func startSim(ctx context.Context, addr string, cfg sim.Config) (*runningSim, error) {
	s, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sim: %w", err)
	}
	rs := &runningSim{
		url:  "http://" + ln.Addr().String(),
		sim:  s,
		http: &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)},
		done: make(chan error, 1),
	}
	go func() { rs.done <- rs.http.Serve(ln) }()
	return rs, nil
}

// stop ends open streams first (Close), then the listener.
func (rs *runningSim) stop() error {
	rs.sim.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := rs.http.Shutdown(ctx)
	if serveErr := <-rs.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
