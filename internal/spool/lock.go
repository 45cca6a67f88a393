package spool

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on dir for as long as the process runs
// (or until the returned func is called). A spool directory has one
// owner: two replicas draining one directory completed the same job
// twice, and neither's count of what waits was true. A second process is
// refused at once, naming the directory, rather than left waiting.
//
// The lock is taken on the directory itself, not on a file in it, so the
// directory holds nothing but jobs (what operators and tests list there).
func lockDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: directory %s: %w", dir, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: directory %s cannot be locked: %w", dir, err)
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("spool: directory %s is in use by another voxgate process; give each replica its own spool directory", dir)
		}
		return nil, fmt.Errorf("spool: directory %s cannot be locked: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
		d.Close()
	}, nil
}
