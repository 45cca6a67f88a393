package gemini

import (
	"fmt"
	"sync"
	"time"
)

// gemReroute is a retired model Google keeps answering, silently, with
// another one: the response's modelVersion names the model that answered,
// and usage is that model's (Gemini changelog 2026-10-08; models.md, "Read
// again 2026-11-28").
type gemReroute struct {
	to    string
	since string // YYYY-MM-DD, UTC
}

var gemReroutes = map[string]gemReroute{
	"gemini-3.7-flash": {to: "gemini-3.8-flash", since: "2026-10-08"},
	"gemini-3.5-flash": {to: "gemini-3.6-flash", since: "2026-10-08"},
	"gemini-2.5-pro":   {to: "gemini-3.8-flash", since: "2026-12-01"},
	"gemini-2.5-flash": {to: "gemini-3.5-flash-lite", since: "2026-12-01"},
}

// answeringModel is the model that answers a request for model at now: its
// re-route target from the re-route's date, else model itself. A name is
// matched whole, so gemini-2.5-flash-lite (not retired) answers as itself.
func answeringModel(model string, now time.Time) string {
	r, ok := gemReroutes[model]
	if !ok {
		return model
	}
	since, err := time.Parse(time.DateOnly, r.since)
	if err != nil || now.UTC().Before(since) {
		return model
	}
	return r.to
}

// gemThinkingLevels are the thinking levels a model takes when it takes
// fewer than the API's four; any other is a 400. gemini-3.8-flash refuses
// MINIMAL (3P measurement 2026-09-19, models.md).
var gemThinkingLevels = map[string][]string{
	"gemini-3.8-flash": {"LOW", "MEDIUM", "HIGH"},
}

// checkThinkingLevel refuses a thinkingLevel the answering model does not
// take, as the API does.
func checkThinkingLevel(model, level string) error {
	allowed, ok := gemThinkingLevels[model]
	if !ok || level == "" {
		return nil
	}
	for _, a := range allowed {
		if a == level {
			return nil
		}
	}
	return gemInvalid(fmt.Sprintf("* GenerateContentRequest.generation_config.thinking_config.thinking_level: "+
		"thinking level %s is not supported by model %s.\n", level, model))
}

// StoreCounts counts generateContent requests by their top-level store
// field, so a test can see whether a client asked the API not to keep its
// requests (new paid projects store them unless store is false).
type StoreCounts struct {
	Unset, True, False int64
}

type storeBook struct {
	mu sync.Mutex
	c  StoreCounts
}

func (b *storeBook) note(store *bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case store == nil:
		b.c.Unset++
	case *store:
		b.c.True++
	default:
		b.c.False++
	}
}

// Stores is what requests have said about store so far.
func (s *Server) Stores() StoreCounts {
	s.stores.mu.Lock()
	defer s.stores.mu.Unlock()
	return s.stores.c
}
