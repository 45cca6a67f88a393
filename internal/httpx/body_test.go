package httpx_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// A body with no declared length (chunked) that runs into the server-wide
// cap is 413, like one whose declared length is over it.
func TestDecodeChunkedOverTheServerCap(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "/", io.MultiReader(strings.NewReader(`{"name":"`+strings.Repeat("a", 2048)+`"}`)))
	r.ContentLength = -1
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 1024)
	var v body
	err := httpx.Decode(r, &v, httpx.DecodeOptions{MaxBytes: 1 << 20})
	if got := apierr.CodeOf(err); got != apierr.PayloadTooLarge {
		t.Fatalf("code: got %q, want PAYLOAD_TOO_LARGE (err %v)", got, err)
	}
	if msg := apierr.From(err).Message; !strings.Contains(msg, "1024") {
		t.Fatalf("message: got %q, want it to name the 1024-byte cap", msg)
	}
}

// How Error treats a request whose context has ended depends on why it
// ended: a client that went away gets nothing written and nothing logged;
// a deadline or a shutdown is still answered 503.
func TestErrorAfterTheContextEnded(t *testing.T) {
	t.Parallel()
	shutdown := errors.New("shutting down")
	cases := []struct {
		name       string
		end        func(context.Context) context.Context
		wantStatus int // 0: nothing written
		wantLog    bool
	}{
		{"client gone", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx
		}, 0, false},
		{"deadline", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithTimeout(ctx, 0)
			t.Cleanup(cancel)
			return ctx
		}, 503, true},
		{"shutdown", func(ctx context.Context) context.Context {
			ctx, cancel := context.WithCancelCause(ctx)
			cancel(shutdown)
			return ctx
		}, 503, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			r := httptest.NewRequest("GET", "/", nil)
			ctx := httpx.WithRequest(r.Context(), "req-1", slog.New(slog.NewJSONHandler(&logs, nil)))
			ctx = tc.end(ctx)
			r = r.WithContext(ctx)
			w := httptest.NewRecorder()
			// What a database call made with that context returns.
			httpx.Error(w, r, database.Error("report", ctx.Err()))
			wrote := w.Body.Len() > 0
			if tc.wantStatus == 0 && wrote {
				t.Fatalf("got %d %s, want nothing written", w.Code, w.Body)
			}
			if tc.wantStatus != 0 && (w.Code != tc.wantStatus || w.Header().Get("Retry-After") == "") {
				t.Fatalf("got %d (Retry-After %q), want %d with Retry-After", w.Code, w.Header().Get("Retry-After"), tc.wantStatus)
			}
			if logged := strings.Contains(logs.String(), "request failed"); logged != tc.wantLog {
				t.Fatalf("logged: got %v, want %v (%s)", logged, tc.wantLog, logs.String())
			}
		})
	}
}
