package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/internal/telemetry"
)

var tracer = telemetry.Tracer("server")

// endRequestSpan names the request's span by its route, as the HTTP
// semantic conventions do, and records its outcome.
func endRequestSpan(span trace.Span, method, route string, status int, requestID string) {
	span.SetName(method + " " + strings.TrimPrefix(route, method+" "))
	span.SetAttributes(attribute.String("http.request.method", method), attribute.String("http.route", route),
		attribute.Int("http.response.status_code", status), attribute.String("voxgate.request_id", requestID))
	if status >= 500 {
		span.SetStatus(codes.Error, strconv.Itoa(status))
	}
}

// middleware wraps the mux, outermost first: request id, access log and
// metrics, panic recovery, CORS, body deadline, body limit.
func (s *Server) middleware(mux http.Handler) http.Handler {
	h := s.limitBody(mux)
	h = s.bodyDeadline(h)
	h = s.cors(h)
	h = s.recoverPanics(h)
	return s.observe(h)
}

// statusWriter records what the handler wrote, for the log and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	userID string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and deadlines (SSE).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush keeps streaming handlers working through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// statusClientGone is recorded for a request whose client went away before
// any response was written (nginx's 499): it is not a server error.
const statusClientGone = 499

// observe assigns the request id and opens the request's span (continuing
// the app's trace when it sent a traceparent), then logs and counts the
// request under its route pattern once it is done. It never logs or traces
// headers or bodies: they carry tokens and health data. A probe
// (/healthz, /readyz) gets no span: a kubelet asks every few seconds per
// replica, and those spans would be most of what a collector keeps.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := s.requestID(r.Header.Get("X-Request-Id"))
		w.Header()["X-Request-Id"] = []string{id}
		ctx, span := r.Context(), trace.SpanFromContext(r.Context()) // a probe's: not recording
		if !probe(r.URL.Path) {
			ctx = telemetry.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
			ctx, span = tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer))
		}
		ctx = httpx.WithRequest(ctx, id, s.log)
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)

		route := r.Pattern
		if route == "" || route == missPattern {
			route = "unmatched"
		}
		status := sw.status
		switch {
		case status != 0:
		case httpx.ClientGone(r.Context()):
			status = statusClientGone
		default:
			status = http.StatusOK
		}
		elapsed := time.Since(start)
		traceID := ""
		if span.IsRecording() {
			endRequestSpan(span, r.Method, route, status, id)
			if sc := span.SpanContext(); sc.IsSampled() {
				traceID = sc.TraceID().String()
			}
		}
		span.End()
		s.metrics.observe(route, status, elapsed, traceID)
		s.log.LogAttrs(ctx, slog.LevelInfo, "request",
			slog.String("request_id", id),
			slog.String("method", r.Method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Int64("bytes", sw.bytes),
			slog.Int64("duration_us", elapsed.Microseconds()),
			slog.String("user_id", sw.userID),
		)
	})
}

// probe reports a liveness or readiness probe's path.
func probe(path string) bool { return path == "/healthz" || path == "/readyz" }

// requestID keeps a caller's id when it is short and plain, so traces join
// up across services; anything else is replaced by this process's random
// prefix and a counter: unique without a syscall per request.
func (s *Server) requestID(in string) string {
	if n := len(in); n > 0 && n <= 64 && plain(in) {
		return in
	}
	return s.idPrefix + strconv.FormatUint(s.idSeq.Add(1), 36)
}

func newIDPrefix() string { return randid.New("", 6) + "-" }

func plain(s string) bool {
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// recoverPanics turns a panic into a 500 JSON error, logged once with its
// stack. http.ErrAbortHandler keeps its meaning: abort without a response.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			httpx.Logger(r.Context()).ErrorContext(r.Context(), "panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			s.metrics.panics.Inc()
			// The cause is already logged; give the writer none so it is not logged twice.
			httpx.Error(w, r, apierr.New(apierr.Internal, ""))
		}()
		next.ServeHTTP(w, r)
	})
}

// cors answers preflights and tags responses for the configured origins only.
func (s *Server) cors(next http.Handler) http.Handler {
	origins := s.cfg.Server.CORSOrigins
	any := slices.Contains(origins, "*")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || (!any && !slices.Contains(origins, origin)) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		// A web app reads whether waiting helps (X-Should-Retry, DESIGN §5),
		// and may send its trace (traceparent, tracestate): without them
		// here the browser hides the one and refuses the request with the
		// other.
		h.Set("Access-Control-Expose-Headers", "Retry-After, X-Request-Id, X-Should-Retry")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, X-Request-Id, Traceparent, Tracestate")
			h.Set("Access-Control-Max-Age", strconv.Itoa(600))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitBody caps every request body at the configured size; handlers with
// smaller limits check their own first.
func (s *Server) limitBody(next http.Handler) http.Handler {
	limit := s.cfg.Server.MaxBodyBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			httpx.Error(w, r, apierr.Errorf(apierr.PayloadTooLarge, "The request body is larger than %d bytes.", limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// IsBodyTooLarge reports whether err came from the body limit.
func IsBodyTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
