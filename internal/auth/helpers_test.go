package auth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

var testSecret = []byte("test-secret-that-is-at-least-32-bytes-long")

// keyPair is a signing key and its published JWK.
type keyPair struct {
	kid    string
	method jwt.SigningMethod
	priv   crypto.Signer
}

func newRSA(t testing.TB, kid string) keyPair {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{kid: kid, method: jwt.SigningMethodRS256, priv: k}
}

func newEC(t testing.TB, kid string) keyPair {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{kid: kid, method: jwt.SigningMethodES256, priv: k}
}

func (k keyPair) sign(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(k.method, claims)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jwksServer serves a key set that tests can replace, and counts fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	fetches atomic.Int64
}

func newJWKSServer(t testing.TB, keys ...keyPair) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.set(t, keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(t testing.TB, keys ...keyPair) {
	t.Helper()
	var set jwkset.JWKSMarshal
	for _, k := range keys {
		alg := jwkset.AlgRS256
		if k.method == jwt.SigningMethodES256 {
			alg = jwkset.AlgES256
		}
		j, err := jwkset.NewJWKFromKey(k.priv.Public(), jwkset.JWKOptions{
			Metadata: jwkset.JWKMetadataOptions{KID: k.kid, ALG: alg, USE: jwkset.UseSig},
		})
		if err != nil {
			t.Fatal(err)
		}
		set.Keys = append(set.Keys, j.Marshal())
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.body = b
	s.mu.Unlock()
}

func hsToken(t testing.TB, secret []byte, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
