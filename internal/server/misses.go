package server

import (
	"net/http"
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
