// Command toolserver serves Nutrir's webhook tools for voxgate
// (examples/nutrir/README.md). It reads the signing secret from
// NUTRIR_HOOK_SECRET, the variable voxgate.yaml's secret_env names, the
// practice's database from NUTRIR_DATABASE_URL (schema.sql applied), and
// listens on NUTRIR_HOOK_ADDR (default 127.0.0.1:8093).
package main

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/examples/nutrir/hooks"
)

func main() {
	secret := os.Getenv("NUTRIR_HOOK_SECRET")
	if len(secret) < 16 {
		log.Fatal("NUTRIR_HOOK_SECRET must hold at least 16 bytes")
	}
	db, err := pgxpool.New(context.Background(), os.Getenv("NUTRIR_DATABASE_URL"))
	if err != nil {
		log.Fatalf("NUTRIR_DATABASE_URL: %v", err)
	}
	addr := os.Getenv("NUTRIR_HOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8093"
	}
	srv := &http.Server{Addr: addr, Handler: hooks.New(db, []byte(secret)), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("nutrir tool server on http://%s/hooks/", addr)
	log.Fatal(srv.ListenAndServe())
}
