package server

import (
	"net/http"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// jsonMisses answers requests that match no route with a JSON error instead
// of ServeMux's plain text: 404 NOT_FOUND, or 405 METHOD_NOT_ALLOWED with the
// Allow header ServeMux computes.
func jsonMisses(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		probe := &missProbe{header: http.Header{}}
		mux.ServeHTTP(probe, r)
		if allow := probe.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		switch probe.status {
		case http.StatusMethodNotAllowed:
			httpx.Error(w, r, apierr.New(apierr.MethodNotAllowed, ""))
		case http.StatusNotFound, 0:
			httpx.Error(w, r, apierr.New(apierr.NotFound, "There is no such route."))
		default:
			// A redirect (e.g. path cleaning): pass it on as ServeMux meant.
			for k, v := range probe.header {
				w.Header()[k] = v
			}
			w.WriteHeader(probe.status)
		}
	})
}

// missProbe records what ServeMux would answer, writing nothing.
type missProbe struct {
	header http.Header
	status int
}

func (p *missProbe) Header() http.Header         { return p.header }
func (p *missProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *missProbe) WriteHeader(code int)        { p.status = code }
