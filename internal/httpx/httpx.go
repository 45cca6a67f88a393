// Package httpx adapts handlers that return errors to net/http, and holds the
// small JSON helpers every handler uses: decode → validate → act → respond.
package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/voxgate/voxgate/internal/apierr"
)

// HandlerFunc is an HTTP handler that returns its failure instead of writing
// it, so one place turns errors into responses and logs.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

type ctxKey struct{}

// reqInfo is what the middleware knows of a request. One context value
// holds it all, to keep the per-request allocations down.
type reqInfo struct {
	id  string
	log *slog.Logger
	// bodyLate is set when the body's read ran past its deadline (see
	// WatchBody).
	bodyLate atomic.Bool
}

// WithRequest returns ctx carrying the request id and the base logger.
func WithRequest(ctx context.Context, id string, log *slog.Logger) context.Context {
	return context.WithValue(ctx, ctxKey{}, &reqInfo{id: id, log: log})
}

// WithRequestID returns ctx carrying the request id and the default logger.
func WithRequestID(ctx context.Context, id string) context.Context {
	return WithRequest(ctx, id, slog.Default())
}

// RequestID is the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	if ri, ok := ctx.Value(ctxKey{}).(*reqInfo); ok {
		return ri.id
	}
	return ""
}

// Logger is the logger of ctx's request. Log with its *Context methods and
// ctx: the binary's handler (package logctx) tags each line with the
// request id and the caller read from the context it is logged with.
func Logger(ctx context.Context) *slog.Logger {
	if ri, ok := ctx.Value(ctxKey{}).(*reqInfo); ok {
		return ri.log
	}
	return slog.Default()
}

// Handle adapts h. Errors become the DESIGN §5 JSON body; a 5xx is logged
// once here with its internal cause.
func Handle(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			Error(w, r, err)
		}
	})
}

// errorBody is the wire shape of an error.
type errorBody struct {
	Error map[string]any `json:"error"`
}

// ClientGone reports whether ctx, a request's context, ended because the
// client went away, rather than by a deadline, the server shutting down
// (which cancels with a cause of its own) or a body that did not arrive in
// time (which net/http cancels the same way a departed client is).
func ClientGone(ctx context.Context) bool {
	return ctx.Err() != nil && context.Cause(ctx) == context.Canceled && !BodyTimedOut(ctx)
}

// Error writes err as the DESIGN §5 JSON error. Use it only before a stream
// has started. When the client has gone, whatever failed failed because of
// that: nothing is written or logged, and the access log records 499.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	if ClientGone(r.Context()) {
		return
	}
	if BodyTimedOut(r.Context()) {
		err = errBodyTimedOut(err)
	}
	e := apierr.From(err)
	status := e.Status()
	if status >= 500 && e.Err != nil {
		Logger(r.Context()).ErrorContext(r.Context(), "request failed", "code", e.Code, "err", e.Err)
	}
	body := map[string]any{"code": e.Code, "message": e.Message}
	for k, v := range e.Fields {
		body[k] = v
	}
	if e.RetryAfter > 0 || status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		ra := max(e.RetryAfter, 1)
		body["retry_after_s"] = ra
		w.Header().Set("Retry-After", strconv.Itoa(ra))
		// The official OpenAI SDKs read x-should-retry before Retry-After:
		// false makes them raise at once instead of sleeping through a wait
		// no request outlives; Retry-After and resets_at stay for apps that
		// schedule.
		w.Header().Set("X-Should-Retry", strconv.FormatBool(e.WorthWaiting()))
	}
	if id := RequestID(r.Context()); id != "" {
		body["request_id"] = id
	}
	WriteJSON(w, status, errorBody{Error: body})
}

// WriteJSON writes v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// DecodeOptions tunes Decode.
type DecodeOptions struct {
	// MaxBytes caps the body; larger bodies are PAYLOAD_TOO_LARGE, checked
	// before parsing. 0 means 1 MiB.
	MaxBytes int64
	// AllowUnknown accepts fields the type does not declare.
	AllowUnknown bool
}

// DecodeJSON reads one JSON object from r's body into v with a 1 MiB cap and
// unknown fields refused.
func DecodeJSON(r *http.Request, v any) error {
	return Decode(r, v, DecodeOptions{})
}

// Decode reads one JSON value from r's body into v. Every failure is a
// client-safe INVALID_REQUEST or PAYLOAD_TOO_LARGE (or REQUEST_TIMEOUT, see
// ReadBody).
func Decode(r *http.Request, v any, opt DecodeOptions) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return apierr.New(apierr.InvalidRequest, "The request body must be JSON (Content-Type: application/json).")
	}
	body, err := ReadBody(r, opt.MaxBytes)
	if err != nil {
		return err
	}
	return Unmarshal(body, v, opt.AllowUnknown)
}

// defaultMaxBytes caps a body when its route names no cap.
const defaultMaxBytes = 1 << 20

// ReadBody reads r's whole body, of at most limit bytes (0: 1 MiB). It is
// the one reader of request bodies, JSON or not: a declared length over
// the cap is PAYLOAD_TOO_LARGE before a byte is read, as is a body that
// turns out longer; a read cut off by the body deadline is REQUEST_TIMEOUT;
// any other failed read is INVALID_REQUEST.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = defaultMaxBytes
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit, nil)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &maxBytes):
		// The server-wide cap, met by a body with no declared length.
		return nil, tooLarge(maxBytes.Limit, err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, errBodyTimedOut(err)
	case err != nil:
		return nil, apierr.Wrap(apierr.InvalidRequest, "The request body could not be read.", err)
	case int64(len(body)) > limit:
		return nil, tooLarge(limit, nil)
	}
	return body, nil
}

func tooLarge(limit int64, err error) error {
	return apierr.Wrap(apierr.PayloadTooLarge, fmt.Sprintf("The request body is larger than %d bytes.", limit), err)
}

// Unmarshal decodes exactly one JSON value from body into v, with messages
// that name the offending field but never echo the body. It is the one
// decoder of request bodies: besides what encoding/json checks, anything
// after the value, a key twice in one object and a key not spelled exactly
// as its field are INVALID_REQUEST (checkStrict).
func Unmarshal(body []byte, v any, allowUnknown bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.New(apierr.InvalidRequest, "The request body is empty.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if !allowUnknown {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return apierr.Wrap(apierr.InvalidRequest, describe(err), err)
	}
	return checkStrict(body, dec.InputOffset(), reflect.TypeOf(v), allowUnknown)
}

func describe(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return "The request body is not valid JSON."
	case errors.As(err, &typ):
		if typ.Field != "" {
			return "Field " + strconv.Quote(typ.Field) + " must be " + jsonKind(typ.Type.Kind().String()) + "."
		}
		return "The request body has the wrong shape."
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "Unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ") + "."
	}
	return "The request body is not valid."
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "another type"
}
