// Command seedgen writes tools/demo/migrations/0002_recipes.sql from the demo
// recipe data. Run it through `go generate ./tools/demo`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/voxgate/voxgate/tools/demo/internal/seed"
)

func main() {
	out := flag.String("o", "", "output file")
	flag.Parse()
	sql, err := seed.SQL()
	if err != nil {
		fmt.Fprintln(os.Stderr, "seedgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, []byte(sql), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "seedgen:", err)
		os.Exit(1)
	}
}
