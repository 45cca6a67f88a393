package config_test

import (
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
)

// A key set fetched over plain http can be swapped by anyone on the path,
// and whoever swaps it can forge tokens: only https, or http to loopback.
func TestJWKSURLMustBeHTTPSOffLoopback(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://auth.example/.well-known/jwks.json", true},
		{"http://127.0.0.1:8081/jwks", true},
		{"http://127.1.2.3/jwks", true},
		{"http://[::1]:9000/jwks", true},
		{"http://localhost/jwks", true},
		{"http://LOCALHOST:80/jwks", true},
		{"http://auth.example/jwks", false},
		{"http://10.0.0.5/jwks", false},
		{"http://localhost.evil.example/jwks", false},
		{"http://127.0.0.1.evil.example/jwks", false},
		{"ftp://127.0.0.1/jwks", false},
		{"https://", false},
		{"auth.example/jwks", false},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load("", func(k string) string {
				if k == "VOXGATE_JWKS_URL" {
					return tc.url
				}
				return ""
			})
			if tc.ok && err != nil {
				t.Fatalf("got %v, want it accepted", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "auth.jwks_url")) {
				t.Fatalf("got %v, want an error naming auth.jwks_url", err)
			}
		})
	}
}

func TestServerTimeoutsMustBePositive(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"read_body_timeout", "request_timeout"} {
		_, err := config.Parse([]byte("server:\n  " + key + ": 0s\n"))
		if err == nil || !strings.Contains(err.Error(), "server."+key) {
			t.Fatalf("%s: 0s: got %v, want an error naming server.%s", key, err, key)
		}
	}
	c := config.Default()
	if c.Server.ReadBodyTimeout <= 0 || c.Server.RequestTimeout <= 0 {
		t.Fatalf("defaults: read_body_timeout %s, request_timeout %s; want both positive", c.Server.ReadBodyTimeout, c.Server.RequestTimeout)
	}
}
