package core

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Env is what every surface of the simulator shares: the keys it accepts,
// its latency, fault injector, counters, clock and logger, the body limit,
// and the channel that closes when the simulator does.
type Env struct {
	Latency Latency
	Keys    map[string]bool
	Faults  *Injector
	Stats   *StatsBook
	Clock   func() time.Time
	Log     *slog.Logger
	MaxBody int64
	Done    chan struct{}
}

// Handler is an endpoint body. Errors before the response starts are
// returned (an *APIError is written as is, anything else as a 500);
// ErrClientGone and ErrServerClosed mean there is no one to answer.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Endpoint wraps a handler with the per-endpoint counters and error writing.
func (e *Env) Endpoint(name string, h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		e.Stats.Begin(name)
		defer e.Stats.End(name)
		// The real API names every answer, errors included, so a failure
		// can be reported by its id.
		w.Header().Set("X-Request-Id", NewRequestID())
		err := h(w, r)
		var apiErr *APIError
		switch {
		case err == nil, errors.Is(err, ErrServerClosed):
		case errors.Is(err, ErrClientGone):
			e.Stats.Cancelled(name, start)
		case errors.As(err, &apiErr):
			WriteAPIError(w, apiErr)
		default:
			e.Log.ErrorContext(r.Context(), "sim: request failed", "endpoint", name, "err", err)
			WriteAPIError(w, ErrServer())
		}
	})
}

// Authorize checks the Bearer key: any non-empty key, or one of cfg.Keys.
func (e *Env) Authorize(r *http.Request) error { return e.CheckKey(Bearer(r)) }

// CheckKey checks an API key. A client secret (EphemeralPrefix) is not
// one: the Realtime surface checks those where it takes them.
func (e *Env) CheckKey(key string) error {
	if key == "" {
		return ErrNoKey()
	}
	if len(e.Keys) > 0 && !e.Keys[key] || strings.HasPrefix(key, EphemeralPrefix) {
		return ErrBadKey()
	}
	return nil
}

// Bearer returns the request's Bearer key, or "".
func Bearer(r *http.Request) string {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(key)
}

// ReadBody reads at most MaxBody bytes; beyond that the request gets 413.
func (e *Env) ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return e.ReadBodyLimit(w, r, e.MaxBody)
}

// ReadBodyLimit reads at most limit bytes; beyond that the request gets 413.
func (e *Env) ReadBodyLimit(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, ErrTooLarge(limit)
	case err != nil:
		return nil, ErrClientGone
	}
	return body, nil
}

// Wait sleeps for d unless the client leaves or the simulator closes first.
func (e *Env) Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		if ctx.Err() != nil {
			return ErrClientGone
		}
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ErrClientGone
	case <-e.Done:
		return ErrServerClosed
	}
}

// Hang blocks until the client gives up or the simulator closes.
func (e *Env) Hang(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ErrClientGone
	case <-e.Done:
		return ErrServerClosed
	}
}

// TokenDelay is how long generating n tokens takes at the configured speed.
func (e *Env) TokenDelay(n int) time.Duration {
	if e.Latency.TokensPerSecond <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / e.Latency.TokensPerSecond * float64(time.Second))
}

// Now is the simulator's clock: sim.Config.Now, else time.Now.
func (e *Env) Now() time.Time {
	if e.Clock != nil {
		return e.Clock()
	}
	return time.Now()
}

// EphemeralPrefix marks client secrets. They authenticate Realtime calls and
// sockets only, never the key-management or chat endpoints.
const EphemeralPrefix = "ek_"

// Latency describes how fast the simulated model answers.
type Latency struct {
	// TTFT is the delay before the first byte of a response (time to first token).
	TTFT time.Duration `yaml:"ttft" json:"ttft"`
	// TokensPerSecond paces generated tokens after the first; zero means unpaced.
	TokensPerSecond float64 `yaml:"tokens_per_second" json:"tokens_per_second"`
	// ChunkTokens is how many tokens each streamed delta carries; zero means 1.
	ChunkTokens int `yaml:"chunk_tokens" json:"chunk_tokens"`
	// ModelTTFT replaces TTFT for the chat models it names (an alias
	// covers its snapshot): a reasoning model stays silent while it
	// reasons, for 30 s or more at high effort.
	ModelTTFT map[string]time.Duration `yaml:"model_ttft" json:"model_ttft,omitempty"`
}

// DefaultLatency is used when sim.Config.Latency is nil: quick enough for
// interactive use, slow enough that streaming is visible.
func DefaultLatency() Latency {
	return Latency{TTFT: 50 * time.Millisecond, TokensPerSecond: 200, ChunkTokens: 1,
		ModelTTFT: map[string]time.Duration{"gpt-6.1-terra": 2 * time.Second, "gpt-6.2-sol": 2 * time.Second}}
}

// WriteJSON writes v as a JSON body with status; v is the simulator's own
// plain data, so a marshalling failure is a 500.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteAPIError(w, ErrServer())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// NameSet is list as a set; an empty list is nil, which callers read as
// "any".
func NameSet(list []string) map[string]bool {
	if len(list) == 0 {
		return nil
	}
	m := make(map[string]bool, len(list))
	for _, v := range list {
		m[v] = true
	}
	return m
}
