package httpx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

type body struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Tags  []string
}

func TestDecode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, ctype string
		want              apierr.Code
		msg               string
	}{
		{"ok", `{"name":"a","count":2}`, "application/json", "", ""},
		{"ok without content type", `{"name":"a"}`, "", "", ""},
		{"empty", ``, "application/json", apierr.InvalidRequest, "empty"},
		{"not json", `{name:`, "application/json", apierr.InvalidRequest, "not valid JSON"},
		{"truncated", `{"name":"a"`, "application/json", apierr.InvalidRequest, "not valid JSON"},
		{"wrong type", `{"count":"two"}`, "application/json", apierr.InvalidRequest, `"count" must be an integer`},
		{"unknown field", `{"nme":"a"}`, "application/json", apierr.InvalidRequest, `Unknown field "nme"`},
		{"two values", `{} {}`, "application/json", apierr.InvalidRequest, "one JSON value"},
		{"form body", `name=a`, "application/x-www-form-urlencoded", apierr.InvalidRequest, "must be JSON"},
		{"too large", `{"name":"` + strings.Repeat("a", 200) + `"}`, "application/json", apierr.PayloadTooLarge, "larger than 100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			var v body
			err := httpx.Decode(r, &v, httpx.DecodeOptions{MaxBytes: 100})
			if got := apierr.CodeOf(err); got != tc.want {
				t.Fatalf("code: got %q, want %q (err %v)", got, tc.want, err)
			}
			if err != nil && !strings.Contains(apierr.From(err).Message, tc.msg) {
				t.Fatalf("message: got %q, want it to contain %q", apierr.From(err).Message, tc.msg)
			}
		})
	}
}

func TestErrorBody(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(httpx.WithRequestID(r.Context(), "req-1"))
	w := httptest.NewRecorder()
	httpx.Error(w, r, apierr.New(apierr.RateLimited, "").WithRetry(12).With("session_id", "s1"))
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "12" {
		t.Fatalf("got %d Retry-After=%q, want 429 and 12", w.Code, w.Header().Get("Retry-After"))
	}
	var got struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"code": "RATE_LIMITED", "message": "You've been busy! Give me a moment to catch up.", "retry_after_s": 12.0, "request_id": "req-1", "session_id": "s1"}
	for k, v := range want {
		if got.Error[k] != v {
			t.Errorf("%s: got %v, want %v", k, got.Error[k], v)
		}
	}
}

// TestShouldRetry: a wait a client can sleep through inside a request (a
// minute window, concurrency) says x-should-retry: true; a longer one (a
// spent day or month) says false, which the official SDKs read before
// Retry-After. Retry-After itself is always the real wait.
func TestShouldRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		err   *apierr.Error
		retry string
		want  string
	}{
		{"concurrency", apierr.New(apierr.ConcurrentLimit, "").WithRetry(5), "5", "true"},
		{"the minute's last second", apierr.New(apierr.RateLimited, "").WithRetry(60), "60", "true"},
		{"an hour window", apierr.New(apierr.RateLimited, "").WithRetry(61), "61", "false"},
		{"a spent day", apierr.New(apierr.QuotaExceeded, "").WithRetry(37757), "37757", "false"},
		{"a 503 without a wait", apierr.New(apierr.Unavailable, ""), "1", "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			w := httptest.NewRecorder()
			httpx.Error(w, r, tc.err)
			if got := w.Header().Get("Retry-After"); got != tc.retry {
				t.Errorf("Retry-After: got %q, want %q", got, tc.retry)
			}
			if got := w.Header().Get("x-should-retry"); got != tc.want {
				t.Errorf("x-should-retry: got %q, want %q", got, tc.want)
			}
		})
	}
	r := httptest.NewRequest("GET", "/", nil)
	w := httptest.NewRecorder()
	httpx.Error(w, r, apierr.New(apierr.InvalidRequest, ""))
	if got := w.Header().Values("x-should-retry"); got != nil {
		t.Errorf("a 400 says x-should-retry %q", got)
	}
}

// An error that is not an *apierr.Error never reaches the client.
func TestInternalErrorsStayInside(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("GET", "/", nil)
	w := httptest.NewRecorder()
	httpx.Error(w, r, errString("pq: password authentication failed for user secret_user"))
	if w.Code != 500 || strings.Contains(w.Body.String(), "secret_user") {
		t.Fatalf("got %d %s, want a 500 without internals", w.Code, w.Body)
	}
}

func TestEveryCodeHasAStatus(t *testing.T) {
	t.Parallel()
	want := map[apierr.Code]int{
		"INVALID_REQUEST": 400, "UNAUTHORIZED": 401, "FORBIDDEN": 403, "TOOL_NOT_ALLOWED": 403,
		"NOT_FOUND": 404, "TOOL_NOT_FOUND": 404, "SESSION_ENDED": 409, "CONFLICT": 409,
		"PAYLOAD_TOO_LARGE": 413, "TOOL_VALIDATION_ERROR": 422, "AI_VALIDATION_ERROR": 422,
		"AI_PII_LEAK": 422, "AI_CONTENT_FILTERED": 422, "RATE_LIMITED": 429, "CONCURRENT_LIMIT": 429, "QUOTA_EXCEEDED": 429,
		"AI_RATE_LIMITED": 429, "AI_CONFIG_ERROR": 502, "AI_PARSE_ERROR": 502, "AI_UNAVAILABLE": 503, "UNAVAILABLE": 503,
		"AI_FEATURE_DISABLED": 503, "INTERNAL": 500, "METHOD_NOT_ALLOWED": 405, "VALIDATION_ERROR": 422,
		"REQUEST_TIMEOUT": 408, "IDEMPOTENCY_MISMATCH": 422,
	}
	for code, status := range want {
		if got := apierr.Status(code); got != status {
			t.Errorf("%s: got %d, want %d", code, got, status)
		}
	}
	if got, want := len(apierr.Codes()), len(want); got != want {
		t.Errorf("codes: got %d, want %d", got, want)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// FuzzUnmarshal: any body decodes or yields a client-safe INVALID_REQUEST
// that never echoes the input.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{}`, `{"name":"x","count":1,"Tags":["a"]}`, `[`, `{"count":1e400}`, `null`, `"str"`, "\xff\xfe", `{"name":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v body
		err := httpx.Unmarshal(data, &v, false)
		if err == nil {
			return
		}
		e := apierr.From(err)
		if e.Code != apierr.InvalidRequest {
			t.Fatalf("got %s, want INVALID_REQUEST", e.Code)
		}
		if len(data) > 8 && strings.Contains(e.Message, string(data)) {
			t.Fatalf("message echoes the body: %q", e.Message)
		}
	})
}

func TestReadBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		body      io.Reader
		declared  int64 // 0: as httptest sets it; -1: unknown
		limit     int64
		serverCap int64 // 0: none
		want      apierr.Code
		msg       string
	}{
		{"within the cap", strings.NewReader("0123456789"), 0, 10, 0, "", ""},
		{"declared over the cap, never read", iotest.ErrReader(errors.New("the body was read")), 11, 10, 0, apierr.PayloadTooLarge, "larger than 10 bytes"},
		{"longer than the cap", strings.NewReader("0123456789a"), -1, 10, 0, apierr.PayloadTooLarge, "larger than 10 bytes"},
		{"default cap", strings.NewReader(strings.Repeat("a", 1<<20+1)), -1, 0, 0, apierr.PayloadTooLarge, "larger than 1048576 bytes"},
		{"server cap", strings.NewReader(strings.Repeat("a", 100)), -1, 1000, 50, apierr.PayloadTooLarge, "larger than 50 bytes"},
		{"stalled", io.MultiReader(strings.NewReader("01"), iotest.ErrReader(fmt.Errorf("read: %w", os.ErrDeadlineExceeded))), -1, 10, 0, apierr.RequestTimeout, "did not arrive in time"},
		{"broken", io.MultiReader(strings.NewReader("01"), iotest.ErrReader(io.ErrUnexpectedEOF)), -1, 10, 0, apierr.InvalidRequest, "could not be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/", c.body)
			if c.declared != 0 {
				r.ContentLength = c.declared
			}
			if c.serverCap > 0 {
				r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, c.serverCap)
			}
			body, err := httpx.ReadBody(r, c.limit)
			if got := apierr.CodeOf(err); got != c.want {
				t.Fatalf("got %q (err %v), want %q", got, err, c.want)
			}
			if err != nil && !strings.Contains(apierr.From(err).Message, c.msg) {
				t.Fatalf("got message %q, want it to contain %q", apierr.From(err).Message, c.msg)
			}
			if err == nil && string(body) != "0123456789" {
				t.Fatalf("got body %q, want %q", body, "0123456789")
			}
		})
	}
}
