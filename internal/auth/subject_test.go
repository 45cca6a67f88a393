package auth_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
)

// rawHS256 signs claims given as raw bytes, so a test can put bytes in the
// payload that no JSON encoder would produce.
func rawHS256(secret, claims []byte) string {
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// A sub holding invalid UTF-8 is refused, never rewritten to U+FFFD: two
// different raw subs must never become one user.
func TestSubWithInvalidUTF8IsRefused(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, auth.Params{Secret: testSecret, CacheSize: 10})
	exp := now.Add(time.Hour).Unix()
	for _, sub := range []string{"user-\xff", "user-\xfe", "\xc3(", "user-\xed\xa0\x80"} {
		tok := rawHS256(testSecret, fmt.Appendf(nil, `{"sub":"%s","exp":%d}`, sub, exp))
		p, err := v.Verify(context.Background(), tok)
		if err == nil {
			t.Fatalf("sub %q: got user %q, want 401", sub, p.UserID)
		}
		wantUnauthorized(t, err)
	}
	// The same construction with a valid sub passes, so the refusals above
	// are about the bytes, not the hand-made token.
	tok := rawHS256(testSecret, fmt.Appendf(nil, `{"sub":"usuário","exp":%d}`, exp))
	if p, err := v.Verify(context.Background(), tok); err != nil || p.UserID != "usuário" {
		t.Fatalf("valid sub: got %+v, %v; want user usuário", p, err)
	}
}
