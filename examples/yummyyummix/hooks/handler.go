// Package hooks is YummyYummix's reference tool server: the app's side of
// the webhook tools that examples/yummyyummix/voxgate.yaml declares (the
// seed's tool registry: search_recipes, generate_custom_recipe,
// retrieve_custom_recipe, and the context builder as get_user_context).
// voxgate POSTs {call_id, user_id, session_id, name, arguments}, signed
// with X-Voxgate-Signature, for text and voice alike; each tool answers
// JSON that voxgate hands to the model and, as a card, to the app.
//
// It imports nothing from voxgate but the examples' signature check: an
// app team copies it, or writes the same in its own stack. The recipes
// are a small in-memory sample where the real app reads its recipes and
// user_recipes tables.
package hooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/voxgate/voxgate/examples/hookauth"
)

// Call is one call the server answered, as its log keeps it.
type Call = hookauth.Call

// tool answers one call's arguments for a user.
type tool func(s *Server, userID string, args json.RawMessage) (any, error)

// Server serves every YummyYummix tool under /hooks/<name>.
type Server struct {
	secret []byte
	now    func() time.Time
	tools  map[string]tool

	mu     sync.Mutex
	log    []Call
	custom map[string][]CustomRecipe // by user: the user_recipes of the seed
}

// New returns the server; secret is the one voxgate's secret_env names.
func New(secret []byte) *Server {
	s := &Server{secret: secret, now: time.Now, custom: map[string][]CustomRecipe{}}
	s.tools = map[string]tool{
		"get_user_context":       userContext,
		"search_recipes":         searchRecipes,
		"generate_custom_recipe": generateRecipe,
		"retrieve_custom_recipe": retrieveRecipe,
	}
	return s
}

// Log returns the calls answered so far (the newest maxLog), oldest first.
func (s *Server) Log() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.log...)
}

// maxBody bounds a call's body: arguments are small.
const maxBody = 64 << 10

// maxLog bounds the calls Log keeps.
const maxLog = 1000

// ServeHTTP checks the signature, decodes the call and answers it. A
// refused call is a non-2xx status, which voxgate turns into a tool error
// the model can read.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/hooks/")
	t, known := s.tools[name]
	if r.Method != http.MethodPost || !ok || !known {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	c, refused := hookauth.ReadCall(r, name, s.secret, maxBody, s.now())
	if refused != 0 {
		http.Error(w, http.StatusText(refused), refused)
		return
	}
	s.mu.Lock()
	if len(s.log) == maxLog { // a long-running server keeps the newest calls only
		s.log = append(s.log[:0], s.log[1:]...)
	}
	s.log = append(s.log, c)
	s.mu.Unlock()
	out, err := t(s, c.UserID, c.Arguments)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// decode reads a call's arguments into v; voxgate has already checked
// them against the tool's schema.
func decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		return nil
	}
	return json.Unmarshal(args, v)
}
