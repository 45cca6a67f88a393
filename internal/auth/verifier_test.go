package auth_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func claims(extra map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{"sub": "user-1", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func newVerifier(t *testing.T, p auth.Params) *auth.Verifier {
	t.Helper()
	if p.Now == nil {
		p.Now = func() time.Time { return now }
	}
	v, err := auth.NewVerifier(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// wantUnauthorized checks that err is a 401 UNAUTHORIZED.
func wantUnauthorized(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("got no error, want 401 UNAUTHORIZED")
	}
	e := apierr.From(err)
	if e.Code != apierr.Unauthorized || e.Status() != 401 {
		t.Fatalf("got %s (%d), want UNAUTHORIZED (401)", e.Code, e.Status())
	}
}

func TestVerifyHS256(t *testing.T) {
	t.Parallel()
	other := []byte("another-secret-that-is-also-32-bytes-long!")
	cases := []struct {
		name   string
		p      auth.Params
		header string
		ok     bool
		want   auth.Principal
	}{
		{name: "valid", header: "Bearer " + hsToken(t, testSecret, claims(nil)), ok: true, want: auth.Principal{UserID: "user-1"}},
		{name: "scheme is case-insensitive", header: "bearer " + hsToken(t, testSecret, claims(nil)), ok: true, want: auth.Principal{UserID: "user-1"}},
		{name: "role and plan", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"role": "admin", "plan": "pro"})), ok: true, want: auth.Principal{UserID: "user-1", Role: "admin", Plan: "pro"}},
		{name: "unknown role is a plain user", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"role": "authenticated"})), ok: true, want: auth.Principal{UserID: "user-1"}},
		{name: "expired", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"exp": now.Add(-31 * time.Second).Unix()}))},
		{name: "expired within leeway", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"exp": now.Add(-29 * time.Second).Unix()})), ok: true, want: auth.Principal{UserID: "user-1"}},
		{name: "not yet valid", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"nbf": now.Add(time.Minute).Unix()}))},
		{name: "no exp", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"exp": nil}))},
		{name: "no sub", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"sub": nil}))},
		{name: "empty sub", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"sub": ""}))},
		{name: "sub with NUL", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"sub": "a\x00b"}))},
		{name: "sub too long", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"sub": strings.Repeat("u", 257)}))},
		{name: "sub not a string", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"sub": 42}))},
		{name: "unicode sub", header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"sub": "usuário-ü"})), ok: true, want: auth.Principal{UserID: "usuário-ü"}},
		{name: "bad signature", header: "Bearer " + hsToken(t, other, claims(nil))},
		{name: "alg none", header: "Bearer " + noneToken(claims(nil))},
		{name: "HS384 not accepted", header: "Bearer " + mustSign(t, jwt.SigningMethodHS384, testSecret, claims(nil))},
		{name: "wrong issuer", p: auth.Params{Issuer: "https://issuer.example"}, header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"iss": "https://evil.example"}))},
		{name: "right issuer", p: auth.Params{Issuer: "https://issuer.example"}, header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"iss": "https://issuer.example"})), ok: true, want: auth.Principal{UserID: "user-1"}},
		{name: "missing issuer when configured", p: auth.Params{Issuer: "https://issuer.example"}, header: "Bearer " + hsToken(t, testSecret, claims(nil))},
		{name: "wrong audience", p: auth.Params{Audience: "voxgate"}, header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"aud": "other"}))},
		{name: "right audience", p: auth.Params{Audience: "voxgate"}, header: "Bearer " + hsToken(t, testSecret, claims(map[string]any{"aud": []string{"x", "voxgate"}})), ok: true, want: auth.Principal{UserID: "user-1"}},
		{name: "empty header", header: ""},
		{name: "no scheme", header: hsToken(t, testSecret, claims(nil))},
		{name: "basic scheme", header: "Basic dXNlcjpwYXNz"},
		{name: "bearer without token", header: "Bearer "},
		{name: "garbage token", header: "Bearer not.a.jwt"},
		{name: "two segments", header: "Bearer abc.def"},
		{name: "huge token", header: "Bearer " + strings.Repeat("a", 9000) + ".b.c"},
		{name: "bad base64 header", header: "Bearer %%%." + base64.RawURLEncoding.EncodeToString([]byte(`{}`)) + ".sig"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.p.Secret = testSecret
			v := newVerifier(t, tc.p)
			got, err := v.VerifyHeader(context.Background(), tc.header)
			if !tc.ok {
				wantUnauthorized(t, err)
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVerifyJWKS(t *testing.T) {
	t.Parallel()
	rsaKey, ecKey := newRSA(t, "rsa-1"), newEC(t, "ec-1")
	jwks := newJWKSServer(t, rsaKey, ecKey)
	v := newVerifier(t, auth.Params{JWKSURL: jwks.URL})
	unknown := newRSA(t, "rsa-unknown")
	pubDER, err := x509.MarshalPKIXPublicKey(rsaKey.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"RS256", rsaKey.sign(t, claims(nil)), true},
		{"ES256", ecKey.sign(t, claims(nil)), true},
		{"RS256 expired", rsaKey.sign(t, claims(map[string]any{"exp": now.Add(-time.Hour).Unix()})), false},
		{"unknown kid", unknown.sign(t, claims(nil)), false},
		{"HS256 when only JWKS is configured", hsToken(t, testSecret, claims(nil)), false},
		// Algorithm confusion: an HS256 token whose HMAC key is the RSA public key.
		{"HS256 signed with the RSA public key", hsWithKid(t, pubPEM, "rsa-1", claims(nil)), false},
		{"alg none with a known kid", noneTokenKid(claims(nil), "rsa-1"), false},
		{"RS256 without kid", noKid(t, rsaKey, claims(nil)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Verify(context.Background(), tc.token)
			if !tc.ok {
				wantUnauthorized(t, err)
				return
			}
			if err != nil || got.UserID != "user-1" {
				t.Fatalf("got %+v, %v; want user-1 and no error", got, err)
			}
		})
	}
}

// Both a secret and a JWKS: HS256 tokens are checked only with the secret,
// never with a published public key.
func TestAlgorithmConfusionWithBothConfigured(t *testing.T) {
	t.Parallel()
	rsaKey := newRSA(t, "rsa-1")
	jwks := newJWKSServer(t, rsaKey)
	v := newVerifier(t, auth.Params{Secret: testSecret, JWKSURL: jwks.URL})
	pubDER, _ := x509.MarshalPKIXPublicKey(rsaKey.priv.Public())
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	_, err := v.Verify(context.Background(), hsWithKid(t, pubPEM, "rsa-1", claims(nil)))
	wantUnauthorized(t, err)
	if _, err := v.Verify(context.Background(), hsToken(t, testSecret, claims(nil))); err != nil {
		t.Fatalf("HS256 with the secret: got %v, want ok", err)
	}
	if _, err := v.Verify(context.Background(), rsaKey.sign(t, claims(nil))); err != nil {
		t.Fatalf("RS256: got %v, want ok", err)
	}
}

// After a rotation, the cache must not keep serving verdicts made with a key
// that is no longer published.
func TestKeyRotationDropsCachedVerdicts(t *testing.T) {
	t.Parallel()
	old, next := newRSA(t, "old"), newEC(t, "new")
	jwks := newJWKSServer(t, old)
	v := newVerifier(t, auth.Params{
		JWKSURL: jwks.URL, CacheSize: 100,
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
	})
	ctx := context.Background()
	oldTok := old.sign(t, claims(nil))
	for i := 0; i < 3; i++ { // the second and third are cache hits
		if _, err := v.Verify(ctx, oldTok); err != nil {
			t.Fatalf("old key before rotation: %v", err)
		}
	}
	jwks.set(t, next) // rotate: the old key is gone
	before := jwks.fetches.Load()
	if _, err := v.Verify(ctx, next.sign(t, claims(nil))); err != nil {
		t.Fatalf("new kid after rotation: got %v, want ok (unknown kid refetches)", err)
	}
	if jwks.fetches.Load() == before {
		t.Fatal("an unknown kid did not refetch the key set")
	}
	_, err := v.Verify(ctx, oldTok)
	wantUnauthorized(t, err)
}

func TestUnknownKIDRefetchIsRateLimited(t *testing.T) {
	t.Parallel()
	k := newRSA(t, "k")
	jwks := newJWKSServer(t, k)
	v := newVerifier(t, auth.Params{JWKSURL: jwks.URL, RefreshUnknownKID: rate.NewLimiter(rate.Every(time.Hour), 1)})
	before := jwks.fetches.Load()
	for i := 0; i < 20; i++ {
		_, err := v.Verify(context.Background(), newRSAOnce(t, i).sign(t, claims(nil)))
		wantUnauthorized(t, err)
	}
	if got := jwks.fetches.Load() - before; got > 1 {
		t.Fatalf("20 unknown kids caused %d refetches, want at most 1", got)
	}
}

func TestCachedVerdictExpires(t *testing.T) {
	t.Parallel()
	clock := now
	v := newVerifier(t, auth.Params{Secret: testSecret, CacheSize: 10, Now: func() time.Time { return clock }})
	tok := hsToken(t, testSecret, claims(map[string]any{"exp": now.Add(time.Minute).Unix()}))
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(time.Minute + auth.Leeway + time.Second)
	_, err := v.Verify(context.Background(), tok)
	wantUnauthorized(t, err)
}

func TestNewVerifierRefusesBadParams(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]auth.Params{
		"nothing configured": {},
		"short secret":       {Secret: []byte("short")},
	} {
		if _, err := auth.NewVerifier(p); err == nil {
			t.Errorf("%s: got no error, want one", name)
		}
	}
}

func TestMintRoundTrip(t *testing.T) {
	t.Parallel()
	tok, err := auth.Mint(auth.MintParams{Secret: testSecret, Subject: "u9", Role: "finance", Plan: "pro", TTL: time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, auth.Params{Secret: testSecret})
	got, err := v.Verify(context.Background(), tok)
	if want := (auth.Principal{UserID: "u9", Role: "finance", Plan: "pro"}); err != nil || got != want {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if _, err := auth.Mint(auth.MintParams{Secret: testSecret, Subject: "u", Role: "root", TTL: time.Hour}); err == nil {
		t.Fatal("minting an unknown role: got no error")
	}
}

func newRSAOnce(t *testing.T, i int) keyPair {
	k := newEC(t, "unknown-"+string(rune('a'+i)))
	return k
}

func mustSign(t *testing.T, m jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hsWithKid(t *testing.T, key []byte, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func noneToken(c jwt.MapClaims) string { return noneTokenKid(c, "") }

func noneTokenKid(c jwt.MapClaims, kid string) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	return s
}

func noKid(t *testing.T, k keyPair, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(k.method, c).SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
