package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/pprof"

	"github.com/voxgate/voxgate/internal/logctx"
)

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "Runs the gateway. Needs VOXGATE_DATABASE_URL and VOXGATE_JWT_SECRET or VOXGATE_JWKS_URL.", stderr)
	cfg, err := loadConfig(fs, args, getenv)
	if err != nil {
		return err
	}
	m := &Main{Config: cfg, Logger: newLevelLogger(stderr, cfg.Log.SlogLevel())}
	if path := getenv("VOXGATE_CPU_PROFILE"); path != "" {
		stop, err := cpuProfile(path)
		if err != nil {
			return err
		}
		defer stop()
	}
	if err := m.Run(ctx); err != nil {
		_ = m.Close(ctx)
		return err
	}
	return serveUntilDone(ctx, m)
}

// serveUntilDone serves with a running m until ctx ends (a signal), then
// drains it.
func serveUntilDone(ctx context.Context, m *Main) error {
	var serveErr error
	select {
	case <-ctx.Done():
		m.Logger.Info("shutting down: draining")
	case serveErr = <-m.Wait():
	}
	// The signal has cancelled ctx; draining needs a context of its own.
	err := m.Close(context.WithoutCancel(ctx))
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	if err == nil {
		m.Logger.Info("shut down cleanly")
	}
	return err
}

// cpuProfile writes the process's CPU profile to path until stop: how
// voxgate bench --cpuprofile profiles the gateway it measures.
func cpuProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func newLogger(w io.Writer) *slog.Logger { return newLevelLogger(w, slog.LevelInfo) }

// newLevelLogger is the binary's logger: JSON lines, each logged with a
// request's context tagged with its request and user ids (package logctx).
func newLevelLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(logctx.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})))
}
