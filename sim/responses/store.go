package responses

import (
	"sync"
)

// maxStored bounds the responses kept; the oldest go first. The real API
// keeps a stored response 30 days; a simulator serving a long test run
// must not grow without bound.
const maxStored = 1 << 14

// stored is a response kept for GET, input_items and continuation.
type stored struct {
	resp  *response
	input []item // this request's input items, as input_items lists them
	conv  []item // the whole conversation through this response's output
}

// store keeps responses per API key: the simulator's stand-in for the
// organization (and project) a real key belongs to, so one key cannot
// read, continue or delete another's response.
type store struct {
	mu    sync.Mutex
	byKey map[string]*stored // key + "\x00" + id
	order []string
}

func newStore() *store { return &store{byKey: map[string]*stored{}} }

func storeKey(apiKey, id string) string { return apiKey + "\x00" + id }

func (s *store) put(apiKey string, st *stored) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := storeKey(apiKey, st.resp.ID)
	s.byKey[k] = st
	s.order = append(s.order, k)
	for len(s.order) > maxStored {
		delete(s.byKey, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *store) get(apiKey, id string) *stored {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[storeKey(apiKey, id)]
}

func (s *store) delete(apiKey, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := storeKey(apiKey, id)
	if s.byKey[k] == nil {
		return false
	}
	delete(s.byKey, k)
	return true
}
