package logbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/internal/logbuf"
)

func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	var b logbuf.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "x\n"); got != 800 {
		t.Fatalf("got %d lines, want 800", got)
	}
}
