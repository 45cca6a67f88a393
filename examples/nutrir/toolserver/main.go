// Command toolserver serves Nutrir's webhook tools for voxgate
// (examples/nutrir/README.md). It reads the signing secret from
// NUTRIR_HOOK_SECRET, the variable voxgate.yaml's secret_env names, and
// the practice's database from NUTRIR_DATABASE_URL, else
// VOXGATE_DATABASE_URL (one database serves both in the README); it loads
// schema.sql there when schema nutrir is missing, and listens on
// NUTRIR_HOOK_ADDR (default 127.0.0.1:8093).
package main

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/examples/nutrir"
	"github.com/voxgate/voxgate/examples/nutrir/hooks"
)

func main() {
	secret := os.Getenv("NUTRIR_HOOK_SECRET")
	if len(secret) < 16 {
		log.Fatal("NUTRIR_HOOK_SECRET must hold at least 16 bytes")
	}
	dbURL := os.Getenv("NUTRIR_DATABASE_URL")
	if dbURL == "" {
		dbURL = os.Getenv("VOXGATE_DATABASE_URL")
	}
	ctx := context.Background()
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		log.Fatalf("NUTRIR_DATABASE_URL: %v", err)
	}
	var loaded bool
	if err := db.QueryRow(ctx, `SELECT to_regclass('nutrir.staff') IS NOT NULL`).Scan(&loaded); err != nil {
		log.Fatalf("the practice's database: %v", err)
	}
	if !loaded {
		if _, err := db.Exec(ctx, nutrir.Schema); err != nil {
			log.Fatalf("loading schema.sql: %v", err)
		}
		log.Print("loaded schema.sql: the practice's staff, clients and appointments")
	}
	addr := os.Getenv("NUTRIR_HOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8093"
	}
	srv := &http.Server{Addr: addr, Handler: hooks.New(db, []byte(secret)), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("nutrir tool server on http://%s/hooks/", addr)
	log.Fatal(srv.ListenAndServe())
}
