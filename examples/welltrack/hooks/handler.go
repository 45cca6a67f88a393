// Package hooks is WellTrack's reference tool server: the app's side of
// the webhook tools that examples/welltrack/voxgate.yaml declares. voxgate
// POSTs {call_id, user_id, session_id, name, arguments}, signed with
// X-Voxgate-Signature; each tool answers JSON that voxgate hands to the
// model (and, as a card, to the app).
//
// It imports nothing from voxgate but the examples' signature check
// (examples/hookauth): an app team copies both, or writes the same in its
// own stack. The answers are fixed rules over a small in-memory sample,
// where the real app would read its wt_ tables.
package hooks

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/voxgate/voxgate/examples/hookauth"
)

// tool answers one call's arguments for a user.
type tool func(s *Server, userID string, args json.RawMessage) (any, error)

// Server serves every WellTrack tool under /hooks/<name>.
type Server struct {
	secret []byte
	now    func() time.Time
	tools  map[string]tool
}

// New returns the server; secret is the one voxgate's secret_env names.
func New(secret []byte) *Server {
	s := &Server{secret: secret, now: time.Now}
	s.tools = map[string]tool{
		"get_context":               getContext,
		"generate_weekly_plan":      weeklyPlan,
		"generate_pantry_recipes":   pantryRecipes,
		"generate_recipe_steps":     recipeSteps,
		"summarize_insights":        insights,
		"recommend_supplements":     supplements,
		"recommend_workouts":        workouts,
		"update_goals":              updateGoal,
		"recalc_goal_forecast":      forecast,
		"log_event_suggestion":      logSuggestion,
		"extract_recipe_from_url":   extractRecipe,
		"extract_recipe_from_image": extractRecipe,
	}
	return s
}

// maxBody bounds a call's body: arguments are small.
const maxBody = 64 << 10

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
