package controlplane

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/voxgate/voxgate/internal/apierr"
)

// FuzzCheckOffer: any text either passes with an audio section pion can
// read, or is refused as the app's INVALID_REQUEST; never a panic, never
// another code.
func FuzzCheckOffer(f *testing.F) {
	head := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
	for _, seed := range []string{
		head + "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n",
		head + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n",
		head, "v=0\r\n", " v=0", "", "hello", "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n\x00",
		head + "m=audio 99999999999999999999 RTP/AVP 0\r\n", head + "a=" + strings.Repeat("x", 4096) + "\r\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, offer string) {
		err := checkOffer(offer)
		if err == nil {
			if !strings.Contains(offer, "m=audio") {
				t.Fatalf("offer %q: accepted without an audio section", offer)
			}
			return
		}
		if code := apierr.CodeOf(err); code != apierr.InvalidRequest {
			t.Fatalf("offer %q: got %s, want INVALID_REQUEST", offer, code)
		}
	})
}

// failing hands out text, then fails with err.
func failing(text string, err error) io.Reader {
	return io.MultiReader(strings.NewReader(text), iotest.ErrReader(err))
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
		{"declared too large", "application/sdp", failing("", errors.New("the body was read")), MaxOfferBytes + 1, apierr.PayloadTooLarge},
		{"longer than the cap", "application/sdp", strings.NewReader(strings.Repeat("a", MaxOfferBytes+1)), -1, apierr.PayloadTooLarge},
		{"stalled", "application/sdp", failing("v=0\r\n", fmt.Errorf("read: %w", os.ErrDeadlineExceeded)), -1, apierr.RequestTimeout},
		{"broken", "application/sdp", failing("v=0\r\n", io.ErrUnexpectedEOF), -1, apierr.InvalidRequest},
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
