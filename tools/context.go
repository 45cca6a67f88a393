package tools

import (
	"context"
	"sync"
	"time"

	"github.com/voxgate/voxgate/safety"
)

// ContextProfile runs the context tool c.Name for c's session and renders
// its result for the model's instructions: only the profile fields the
// model may see, marked as data (safety.ModelProfile), the profile's
// language when it names one, and the user's display name for the output
// filter (safety.ReadProfile). The call takes no arguments and is recorded
// with source "context". No tool named gives no profile. A failed call is
// an error for the caller to log; a session or turn goes on without a
// profile rather than failing because of it.
//
// With a context TTL, a user's profile is reused for that long in this
// process, so a user's turns and sessions in that time run the tool (a
// webhook's round trip and a tool_calls row) once. Failures are not kept.
func (e *Executor) ContextProfile(ctx context.Context, c Call) (safety.Profile, error) {
	if c.Name == "" {
		return safety.Profile{}, nil
	}
	if p, ok := e.contexts.get(c.Principal.UserID, c.Name); ok {
		return p, nil
	}
	c.Source, c.Arguments = "context", []byte(`{}`)
	r, err := e.Execute(ctx, c)
	if err != nil {
		return safety.Profile{}, err
	}
	if r.Error != nil {
		return safety.Profile{}, r.Error
	}
	p := safety.ReadProfile(r.Result)
	e.contexts.put(c.Principal.UserID, c.Name, p)
	return p, nil
}

// maxCachedProfiles bounds the cache: past it, expired entries go first,
// then any, so a burst of users cannot grow the process without bound.
const maxCachedProfiles = 10_000

// profileCache keeps context profiles per user and tool for a TTL. A nil
// cache keeps nothing.
type profileCache struct {
	ttl     time.Duration
	now     func() time.Time
	mu      sync.Mutex
	entries map[string]cachedProfile
}

type cachedProfile struct {
	p     safety.Profile
	until time.Time
}

func newProfileCache(ttl time.Duration, now func() time.Time) *profileCache {
	if ttl <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &profileCache{ttl: ttl, now: now, entries: map[string]cachedProfile{}}
}

func (c *profileCache) get(user, tool string) (safety.Profile, bool) {
	if c == nil {
		return safety.Profile{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[user+"\x00"+tool]
	if !ok || !c.now().Before(e.until) {
		return safety.Profile{}, false
	}
	return e.p, true
}

func (c *profileCache) put(user, tool string, p safety.Profile) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= maxCachedProfiles {
		for k, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < maxCachedProfiles {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[user+"\x00"+tool] = cachedProfile{p: p, until: now.Add(c.ttl)}
}
