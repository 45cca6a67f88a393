package auth

import (
	"sync"
	"time"
)

// cache holds verified tokens until they expire. It is keyed by the whole
// token, so a hit proves the caller holds exactly a token we verified.
type cache struct {
	mu      sync.RWMutex
	max     int
	entries map[string]cacheEntry
}

type cacheEntry struct {
	p      Principal
	expiry time.Time // exp + leeway
	gen    uint64    // key generation the verdict was made under
}

func newCache(max int) *cache {
	return &cache{max: max, entries: make(map[string]cacheEntry, min(max, 1024))}
}

func (c *cache) get(token string, now time.Time, gen uint64) (Principal, bool) {
	c.mu.RLock()
	e, ok := c.entries[token]
	c.mu.RUnlock()
	if !ok || e.gen != gen || !now.Before(e.expiry) {
		return Principal{}, false
	}
	return e.p, true
}

func (c *cache) put(token string, p Principal, now, expiry time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[token] = cacheEntry{p: p, expiry: expiry, gen: gen}
}

// evict drops expired entries, then arbitrary ones (map order is random)
// until a tenth of the room is free. Called with mu held.
func (c *cache) evict(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expiry) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < c.max-c.max/10 {
			break
		}
		delete(c.entries, k)
	}
}

func (c *cache) clear() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}

func (c *cache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
