package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// BenchmarkMiddleware measures the whole middleware stack (request id,
// access log, metrics, recovery, CORS, body deadline and limit, auth, the
// request deadline) around a no-op authenticated handler: in process, no
// network, no database.
//
//	go test ./internal/server -run '^$' -bench Middleware -benchmem
func BenchmarkMiddleware(b *testing.B) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	jwks := jwksFor(b, ec, "bench-ec")
	// The baseline: the same no-op handler behind a bare ServeMux, so the
	// figures below can be read as a cost over it on a noisy machine.
	b.Run("baseline", func(b *testing.B) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /bench", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
		req := httptest.NewRequest("GET", "/bench", nil)
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			mux.ServeHTTP(w, req)
		}
	})
	for _, bc := range []struct {
		name  string
		cache int
		es    bool
	}{
		{"HS256/cold", 0, false},
		{"HS256/cached", 10000, false},
		{"ES256/cold", 0, true},
		{"ES256/cached", 10000, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := auth.Params{Secret: secret, CacheSize: bc.cache}
			tok := ""
			if bc.es {
				p = auth.Params{JWKSURL: jwks, CacheSize: bc.cache}
				t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"sub": "bench", "exp": time.Now().Add(time.Hour).Unix()})
				t.Header["kid"] = "bench-ec"
				if tok, err = t.SignedString(ec); err != nil {
					b.Fatal(err)
				}
			} else if tok, err = auth.Mint(auth.MintParams{Secret: secret, Subject: "bench", TTL: time.Hour}); err != nil {
				b.Fatal(err)
			}
			h := benchHandler(b, p)
			req := httptest.NewRequest("GET", "/bench", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			w := &discardWriter{h: http.Header{}}
			h.ServeHTTP(w, req)
			if w.status != 200 {
				b.Fatalf("status %d, want 200", w.status)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				clear(w.h)
				w.status = 0
				h.ServeHTTP(w, req)
			}
		})
	}
}

func benchHandler(b *testing.B, p auth.Params) http.Handler {
	b.Helper()
	v, err := auth.NewVerifier(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(v.Close)
	cfg := config.Default()
	// A lazily connecting pool that the middleware must never touch.
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	s, err := New(Params{Config: &cfg, Pool: pool, Verifier: v, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	s.Mount([]Route{{Pattern: "GET /bench", Handler: s.User(func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(200)
		return nil
	})}})
	return s
}

func jwksFor(b *testing.B, k *ecdsa.PrivateKey, kid string) string {
	j, err := jwkset.NewJWKFromKey(k.Public(), jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid, ALG: jwkset.AlgES256}})
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{j.Marshal()}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	b.Cleanup(srv.Close)
	return srv.URL
}

type discardWriter struct {
	h      http.Header
	status int
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = 200
	}
	return len(p), nil
}
func (d *discardWriter) WriteHeader(c int) { d.status = c }

// The deadlines a real connection takes, as http.ResponseController finds
// them, so the benchmark pays what a served request pays.
func (d *discardWriter) SetReadDeadline(time.Time) error  { return nil }
func (d *discardWriter) SetWriteDeadline(time.Time) error { return nil }
