package server

import (
	"strings"
	"testing"
)

// A path that is not in its clean form (dot segments, doubled slashes)
// names no route: it is a JSON 404 like any other miss, never ServeMux's
// 307 text/html to the cleaned path (/web/../go.mod redirected to
// /go.mod). The clean form of each path is written out by hand.
func TestUncleanPathsAreJSONMisses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	for _, path := range []string{"/web/../go.mod", "/v1/../v1/whoami", "/./healthz", "//healthz", "/v1//whoami", "/web/%2e%2e/go.mod"} {
		for _, method := range []string{"GET", "POST"} {
			w := f.do(t, method, path, token(t, "alice", "", ""), nil, nil)
			if w.Code != 404 || errorCode(t, w) != "NOT_FOUND" || w.Header().Get("Location") != "" ||
				!strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
				t.Errorf("%s %s: got %d %q Location=%q, want a JSON 404", method, path, w.Code, w.Header().Get("Content-Type"), w.Header().Get("Location"))
			}
		}
	}
	// What is clean still routes, a trailing slash included in the miss.
	if w := f.do(t, "GET", "/v1/whoami", token(t, "alice", "", ""), nil, nil); w.Code != 200 {
		t.Errorf("GET /v1/whoami: got %d %s", w.Code, w.Body)
	}
	if w := f.do(t, "GET", "/v1/whoami/", "", nil, nil); w.Code != 404 || errorCode(t, w) != "NOT_FOUND" {
		t.Errorf("GET /v1/whoami/: got %d %s", w.Code, w.Body)
	}
}
