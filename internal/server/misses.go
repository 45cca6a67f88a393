package server

import (
	"net/http"
	"path"
	"strings"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// missPattern catches every request no route matches, so misses get a JSON
// error instead of ServeMux's plain text.
const missPattern = "/"

// misses answers a request that matched no route: 405 METHOD_NOT_ALLOWED
// with an Allow header when the path exists under other methods, else 404
// NOT_FOUND. It probes the mux only on this cold path.
func misses(mux *http.ServeMux) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var allow []string
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, p := mux.Handler(probe); p != "" && p != missPattern {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			return apierr.New(apierr.MethodNotAllowed, "")
		}
		return apierr.New(apierr.NotFound, "There is no such route.")
	}
}

// cleanPathsOnly answers a path that is not in its clean form (a dot
// segment, a doubled slash) with the JSON 404 of any miss. ServeMux would
// answer it with a 307 text/html to the cleaned path: a route's path is
// exact, and a redirect built from the client's dot segments
// (/web/../go.mod to /go.mod) is not an answer an API gives.
func cleanPathsOnly(mux *http.ServeMux) http.Handler {
	notFound := httpx.Handle(func(http.ResponseWriter, *http.Request) error {
		return apierr.New(apierr.NotFound, "There is no such route.")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.EscapedPath(); r.Method != http.MethodConnect && p != cleanPath(p) {
			notFound.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// cleanPath is ServeMux's canonical form of p: rooted, without dot
// segments or doubled slashes, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}
