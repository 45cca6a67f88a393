package auth

import (
	"strconv"
	"testing"
	"time"
)

// The cache never grows past its size, and expired entries go first.
func TestCacheStaysBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCache(100)
	for i := range 50 {
		c.put("expired-"+strconv.Itoa(i), Principal{UserID: "x"}, now, now.Add(-time.Second), 0)
	}
	for i := range 1000 {
		c.put("live-"+strconv.Itoa(i), Principal{UserID: "y"}, now, now.Add(time.Hour), 0)
		if n := c.len(); n > 100 {
			t.Fatalf("after %d puts the cache holds %d entries, want at most 100", i+1, n)
		}
	}
	if _, ok := c.get("live-999", now, 0); !ok {
		t.Fatal("the newest entry is missing")
	}
	if _, ok := c.get("live-999", now, 1); ok {
		t.Fatal("an entry from an older key generation was served")
	}
}
