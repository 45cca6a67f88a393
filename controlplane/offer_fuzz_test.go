package controlplane

import (
	"strings"
	"testing"

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
