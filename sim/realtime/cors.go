package realtime

import "net/http"

// A browser places a direct-mode call itself: it posts its offer to
// /v1/realtime/calls with the session's client secret, from the app's own
// origin (the provider's WebRTC guide: "the browser uses the ephemeral key
// to authenticate a session directly with the OpenAI Realtime API"). That
// is a cross-origin request with an Authorization header, so the browser
// sends a CORS preflight first and reads the answer only when the response
// allows its origin. The simulator allows any origin on that route, for
// the preflight and for the answer (errors included, so a page can show
// them); the real API's exact headers are not documented (docs/sim.md).
// OpenAI's own browser client, @openai/agents-realtime, adds its
// X-OpenAI-Agents-SDK header to that post, so the real API allows it too.
func CORSCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "Location")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "POST")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-OpenAI-Agents-SDK")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
