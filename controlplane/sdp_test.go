package controlplane

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
)

// failingBody hands out its text, then fails with err.
type failingBody struct {
	text string
	err  error
}

func (b *failingBody) Read(p []byte) (int, error) {
	if b.text == "" {
		return 0, b.err
	}
	n := copy(p, b.text)
	b.text = b.text[n:]
	return n, nil
}

// An offer is read as every request body is (httpx.ReadBody): the same
// caps and the same answers, a stalled body included (DESIGN §5: 408).
func TestReadOffer(t *testing.T) {
	t.Parallel()
	const offer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
	cases := []struct {
		name     string
		ctype    string
		body     io.Reader
		declared int64 // 0: as httptest sets it; -1: unknown
		want     apierr.Code
	}{
		{"ok", "application/sdp", strings.NewReader(offer), 0, ""},
		{"ok with parameters", "application/sdp; charset=utf-8", strings.NewReader(offer), 0, ""},
		{"another type", "application/json", strings.NewReader(offer), 0, apierr.InvalidRequest},
		{"no type", "", strings.NewReader(offer), 0, apierr.InvalidRequest},
		{"declared too large", "application/sdp", &failingBody{err: errors.New("the body was read")}, MaxOfferBytes + 1, apierr.PayloadTooLarge},
		{"longer than the cap", "application/sdp", strings.NewReader(strings.Repeat("a", MaxOfferBytes+1)), -1, apierr.PayloadTooLarge},
		{"stalled", "application/sdp", &failingBody{text: "v=0\r\n", err: fmt.Errorf("read: %w", os.ErrDeadlineExceeded)}, -1, apierr.RequestTimeout},
		{"broken", "application/sdp", &failingBody{text: "v=0\r\n", err: io.ErrUnexpectedEOF}, -1, apierr.InvalidRequest},
		{"not sdp", "application/sdp", strings.NewReader("hello"), 0, apierr.InvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/v1/voice/sessions/vs_1/sdp", c.body)
			if c.ctype != "" {
				r.Header.Set("Content-Type", c.ctype)
			}
			if c.declared != 0 {
				r.ContentLength = c.declared
			}
			got, err := readOffer(r)
			if code := apierr.CodeOf(err); code != c.want {
				t.Fatalf("got %q (err %v), want %q", code, err, c.want)
			}
			if err == nil && got != offer {
				t.Fatalf("got offer %q, want %q", got, offer)
			}
		})
	}
}
