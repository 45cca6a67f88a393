// Command composecheck loads a compose file with compose-go, the library
// the docker compose CLI itself loads files with: the compose
// specification's JSON schema, interpolation, and each service's model.
// It is its own module, so the gateway's go.mod does not carry compose-go.
//
//	go run . ../compose.yaml
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: composecheck FILE")
		os.Exit(2)
	}
	path, err := filepath.Abs(os.Args[1])
	if err == nil {
		err = check(path)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "composecheck:", err)
		os.Exit(1)
	}
}

func check(path string) error {
	opts, err := cli.NewProjectOptions([]string{path}, cli.WithWorkingDirectory(filepath.Dir(path)),
		cli.WithResolvedPaths(true), cli.WithOsEnv)
	if err != nil {
		return err
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return err
	}
	// A bind mount naming a file the repository does not have would start
	// the container with an empty directory in its place.
	for _, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type == "bind" {
				if _, err := os.Stat(v.Source); err != nil {
					return fmt.Errorf("service %s: bind mount %s: %w", s.Name, v.Source, err)
				}
			}
		}
	}
	fmt.Printf("composecheck: %s: %d services, valid\n", filepath.Base(path), len(p.Services))
	return nil
}
