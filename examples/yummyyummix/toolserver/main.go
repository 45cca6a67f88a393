// Command toolserver serves YummyYummix's webhook tools for voxgate
// (examples/yummyyummix/README.md). It reads the signing secret from
// YUMMY_HOOK_SECRET, the variable voxgate.yaml's secret_env names, and
// listens on YUMMY_HOOK_ADDR (default 127.0.0.1:8094).
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/voxgate/voxgate/examples/yummyyummix/hooks"
)

func main() {
	secret := os.Getenv("YUMMY_HOOK_SECRET")
	if len(secret) < 16 {
		log.Fatal("YUMMY_HOOK_SECRET must hold at least 16 bytes")
	}
	addr := os.Getenv("YUMMY_HOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8094"
	}
	srv := &http.Server{Addr: addr, Handler: hooks.New([]byte(secret)), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("yummyyummix tool server on http://%s/hooks/", addr)
	log.Fatal(srv.ListenAndServe())
}
