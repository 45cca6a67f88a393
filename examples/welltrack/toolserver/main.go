// Command toolserver serves WellTrack's webhook tools for voxgate
// (examples/welltrack/README.md). It reads the signing secret from
// WELLTRACK_HOOK_SECRET, the same variable voxgate.yaml's secret_env
// names, and listens on WELLTRACK_HOOK_ADDR (default 127.0.0.1:8091).
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/voxgate/voxgate/examples/welltrack/hooks"
)

func main() {
	secret := os.Getenv("WELLTRACK_HOOK_SECRET")
	if len(secret) < 16 {
		log.Fatal("WELLTRACK_HOOK_SECRET must hold at least 16 bytes")
	}
	addr := os.Getenv("WELLTRACK_HOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8091"
	}
	srv := &http.Server{Addr: addr, Handler: hooks.New([]byte(secret)), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("welltrack tool server on http://%s/hooks/", addr)
	log.Fatal(srv.ListenAndServe())
}
