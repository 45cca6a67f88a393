// Command toolserver serves the trainer app's draft_workout_plan webhook
// for voxgate (examples/trainer/README.md). It reads the signing secret
// from TRAINER_HOOK_SECRET, the variable voxgate.yaml's secret_env names,
// and listens on TRAINER_HOOK_ADDR (default 127.0.0.1:8092).
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/voxgate/voxgate/examples/trainer/hooks"
)

func main() {
	secret := os.Getenv("TRAINER_HOOK_SECRET")
	if len(secret) < 16 {
		log.Fatal("TRAINER_HOOK_SECRET must hold at least 16 bytes")
	}
	addr := os.Getenv("TRAINER_HOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8092"
	}
	srv := &http.Server{Addr: addr, Handler: hooks.Handler([]byte(secret)), ReadHeaderTimeout: 5 * time.Second}
	log.Printf("trainer tool server on http://%s/hooks/", addr)
	log.Fatal(srv.ListenAndServe())
}
