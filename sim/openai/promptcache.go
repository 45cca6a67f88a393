package openai

import (
	"container/list"
	"hash/maphash"
	"sync"
	"time"
)

// promptCache decides usage.prompt_tokens_details.cached_tokens the way the
// real API's prompt caching does: a prompt whose leading tokens repeat an
// earlier prompt's, at least 1,024 of them, reports the repeated part as
// cached, in steps of 128 tokens. It is scoped by API key and model (the
// real cache is per organization, and the simulator has no organizations,
// so each key is one) and an entry lives TTL after its last use, or the
// longer time a request's prompt_cache_options.ttl asked when it was used
// (a minimum lifetime: "the backend may retain cache entries for longer").
//
// Each 128-token block of a prompt (512 bytes of counted text, the unit of
// TokensFor) is stored as the hash of everything up to its end, so a block
// matches only when the whole prefix before it does. Only blocks from the
// 1,024th token on are stored; earlier ones could never be reported.
type promptCache struct {
	ttl  time.Duration
	max  int
	seed maphash.Seed

	mu      sync.Mutex
	entries map[uint64]*list.Element // of *cacheEntry
	lru     list.List                // most recently used first
}

type cacheEntry struct {
	hash uint64
	used time.Time
	ttl  time.Duration // the longest lifetime asked of it
}

const (
	cacheBlockTokens = 128
	cacheBlockBytes  = cacheBlockTokens * 4
	cacheMinBlocks   = 1024 / cacheBlockTokens
)

func newPromptCache(c PromptCache) *promptCache {
	pc := &promptCache{ttl: c.TTL, max: c.MaxEntries, seed: maphash.MakeSeed(), entries: map[uint64]*list.Element{}}
	if pc.ttl == 0 {
		pc.ttl = defaultCacheTTL
	}
	if pc.max == 0 {
		pc.max = defaultCacheEntries
	}
	return pc
}

// CachedTokens reports how many of the prompt's leading tokens were cached
// by an earlier request of the same key and model, and caches this prompt's
// blocks; written is how many leading tokens this prompt newly puts in the
// cache (its cacheable prefix past what was cached). promptBytes is the
// prompt's counted length, which lets prompts too short to cache skip the
// hashing.
func (pc *promptCache) CachedTokens(now time.Time, key, model string, req *ChatRequest, promptBytes int) (cached, written int) {
	if promptBytes < cacheMinBlocks*cacheBlockBytes {
		return 0, 0
	}
	blocks := pc.blocks(key, model, req)
	_, ttl := req.cacheTTL()
	pc.mu.Lock()
	defer pc.mu.Unlock()
	hit := 0
	for n := len(blocks); n >= cacheMinBlocks; n-- {
		if pc.live(now, blocks[n-1]) {
			hit = n
			break
		}
	}
	for _, h := range blocks[cacheMinBlocks-1:] {
		pc.touch(now, h, ttl)
	}
	return hit * cacheBlockTokens, (len(blocks) - hit) * cacheBlockTokens
}

// blocks returns the hash of the prompt up to the end of each whole block.
// The kind of each piece is hashed but not counted, so the same bytes under
// another role, or split differently between messages, do not match.
func (pc *promptCache) blocks(key, model string, req *ChatRequest) []uint64 {
	var h maphash.Hash
	h.SetSeed(pc.seed)
	h.WriteString(key)
	h.WriteByte(0)
	h.WriteString(model)
	h.WriteByte(0)
	var out []uint64
	fill := 0
	promptPieces(req, func(kind, text string) {
		h.WriteString(kind)
		h.WriteByte(0)
		for len(text) > 0 {
			n := min(len(text), cacheBlockBytes-fill)
			h.WriteString(text[:n])
			text, fill = text[n:], fill+n
			if fill == cacheBlockBytes {
				out = append(out, h.Sum64())
				fill = 0
			}
		}
	})
	return out
}

func (pc *promptCache) live(now time.Time, h uint64) bool {
	el, ok := pc.entries[h]
	if !ok {
		return false
	}
	e := el.Value.(*cacheEntry)
	return now.Sub(e.used) <= max(pc.ttl, e.ttl)
}

// touch marks h used now under ttl (0: the cache's own), adding it and
// evicting the least recently used entry beyond the bound. An entry that
// outlived its time is written anew, and keeps only the new ttl.
func (pc *promptCache) touch(now time.Time, h uint64, ttl time.Duration) {
	if el, ok := pc.entries[h]; ok {
		e := el.Value.(*cacheEntry)
		if !pc.live(now, h) {
			e.ttl = 0
		}
		e.used, e.ttl = now, max(e.ttl, ttl)
		pc.lru.MoveToFront(el)
		return
	}
	pc.entries[h] = pc.lru.PushFront(&cacheEntry{hash: h, used: now, ttl: ttl})
	if pc.lru.Len() > pc.max {
		last := pc.lru.Back()
		pc.lru.Remove(last)
		delete(pc.entries, last.Value.(*cacheEntry).hash)
	}
}
