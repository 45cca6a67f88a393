// Package logbuf is a log sink that many goroutines may write while a test
// reads it: a bytes.Buffer behind a mutex. Tests hand it to slog handlers
// and read what the code under test logged.
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent use; its zero value is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
