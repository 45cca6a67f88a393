package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
)

// FuzzVerifyHeader feeds arbitrary Authorization headers through the whole
// verification path: every input is either a valid token or a 401, never a
// panic or another error.
func FuzzVerifyHeader(f *testing.F) {
	valid := hsToken(f, testSecret, claims(nil))
	for _, s := range []string{"", "Bearer ", "Bearer " + valid, valid, "Bearer a.b.c", "Bearer " + noneToken(claims(nil)),
		"bearer  " + valid + " ", "Basic xyz", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.", "Bearer ..", "Bearer \x00.\x00.\x00"} {
		f.Add(s)
	}
	v, err := auth.NewVerifier(auth.Params{Secret: testSecret, CacheSize: 64, Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(v.Close)
	f.Fuzz(func(t *testing.T, header string) {
		p, err := v.VerifyHeader(context.Background(), header)
		if err != nil {
			if c := apierr.CodeOf(err); c != apierr.Unauthorized {
				t.Fatalf("got code %s, want UNAUTHORIZED", c)
			}
			return
		}
		if p.UserID == "" {
			t.Fatal("accepted a token without a subject")
		}
	})
}
