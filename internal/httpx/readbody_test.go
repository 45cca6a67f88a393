package httpx_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// stallingBody hands out its text, then fails with err.
type stallingBody struct {
	text string
	err  error
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if b.text == "" {
		return 0, b.err
	}
	n := copy(p, b.text)
	b.text = b.text[n:]
	return n, nil
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
		{"declared over the cap, never read", &stallingBody{err: errors.New("the body was read")}, 11, 10, 0, apierr.PayloadTooLarge, "larger than 10 bytes"},
		{"longer than the cap", strings.NewReader("0123456789a"), -1, 10, 0, apierr.PayloadTooLarge, "larger than 10 bytes"},
		{"default cap", strings.NewReader(strings.Repeat("a", 1<<20+1)), -1, 0, 0, apierr.PayloadTooLarge, "larger than 1048576 bytes"},
		{"server cap", strings.NewReader(strings.Repeat("a", 100)), -1, 1000, 50, apierr.PayloadTooLarge, "larger than 50 bytes"},
		{"stalled", &stallingBody{text: "01", err: fmt.Errorf("read: %w", os.ErrDeadlineExceeded)}, -1, 10, 0, apierr.RequestTimeout, "did not arrive in time"},
		{"broken", &stallingBody{text: "01", err: io.ErrUnexpectedEOF}, -1, 10, 0, apierr.InvalidRequest, "could not be read"},
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
