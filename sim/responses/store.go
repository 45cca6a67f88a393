package responses

import (
	"strings"
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
	// reasoning counts the stored responses holding each reasoning item
	// (key + "\x00" + item id), which a later input may refer to by id
	// alone; a continuation's conversation holds its predecessors'.
	reasoning map[string]int
}

func newStore() *store { return &store{byKey: map[string]*stored{}, reasoning: map[string]int{}} }

func storeKey(apiKey, id string) string { return apiKey + "\x00" + id }

func (s *store) put(apiKey string, st *stored) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := storeKey(apiKey, st.resp.ID)
	s.byKey[k] = st
	s.order = append(s.order, k)
	s.index(apiKey, st, true)
	for len(s.order) > maxStored {
		if old := s.byKey[s.order[0]]; old != nil {
			oldKey, _, _ := strings.Cut(s.order[0], "\x00")
			s.index(oldKey, old, false)
		}
		delete(s.byKey, s.order[0])
		s.order = s.order[1:]
	}
}

// index adds or removes st's reasoning items from the stored ones.
func (s *store) index(apiKey string, st *stored, on bool) {
	for _, it := range st.conv {
		if it.Type != "reasoning" {
			continue
		}
		k := storeKey(apiKey, it.ID)
		if on {
			s.reasoning[k]++
		} else if s.reasoning[k]--; s.reasoning[k] <= 0 {
			delete(s.reasoning, k)
		}
	}
}

// hasItem reports whether apiKey's stored responses hold reasoning item id.
func (s *store) hasItem(apiKey, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reasoning[storeKey(apiKey, id)] > 0
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
	st := s.byKey[k]
	if st == nil {
		return false
	}
	s.index(apiKey, st, false)
	delete(s.byKey, k)
	return true
}
