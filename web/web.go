// Package web serves the two browser pages of DESIGN §1: /admin, where
// finance reviews the cost ledger, and /demo, where an app team tries chat
// and voice. Both are public HTML rendered by html/template from embedded
// files, with one stylesheet and one script each of the project's own; no
// build step and nothing fetched at run time. The pages hold no data: every
// figure comes from the /v1 API, called by the script with the token the
// user pasted (or the one `voxgate dev` put in the URL's fragment).
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/voxgate/voxgate/internal/apierr"
)

//go:embed static templates
var files embed.FS

// CSP is every page's Content-Security-Policy: only this origin, no inline
// script or style (so markup carries classes, never style=), no framing.
// connect-src 'self' keeps the script's calls on the gateway itself.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; media-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

// demoCSP is /demo's policy: CSP, whose connect-src also names the
// provider's origin when the gateway hands out direct sessions, whose
// offer the page posts to the provider itself (docs/web.md).
func demoCSP(origins []string) string {
	if len(origins) == 0 {
		return CSP
	}
	return strings.Replace(CSP, "connect-src 'self'", "connect-src 'self' "+strings.Join(origins, " "), 1)
}

// origin checks that s is a bare http(s) origin (scheme, host, port), the
// only thing a policy may name here.
func origin(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, " ;,'\"") {
		return fmt.Errorf("web: %q is not an http(s) origin", s)
	}
	return nil
}

// AssetPrefix is where the hashed static files are served.
const AssetPrefix = "/web/"

// asset is one embedded static file under its content-hashed name.
type asset struct {
	body  []byte
	ctype string
}

// Pages serves /admin, /demo and their assets.
type Pages struct {
	assets map[string]asset  // hashed name → file
	urls   map[string]string // plain name → hashed URL
	admin  *template.Template
	demo   *template.Template
	// demoCSP is /demo's policy (demoCSP).
	demoCSP string
}

// New hashes the embedded assets and parses the templates; a broken
// template is a startup error, not a request-time one. directOrigins are
// the origins /demo's script may call besides the gateway: the provider's
// Realtime origin, for direct-mode calls.
func New(directOrigins ...string) (*Pages, error) {
	for _, o := range directOrigins {
		if err := origin(o); err != nil {
			return nil, err
		}
	}
	p := &Pages{assets: map[string]asset{}, urls: map[string]string{}, demoCSP: demoCSP(directOrigins)}
	entries, err := fs.ReadDir(files, "static")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := files.ReadFile("static/" + e.Name())
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		hashed := hex.EncodeToString(sum[:6]) + "." + e.Name()
		p.assets[hashed] = asset{body: b, ctype: contentType(e.Name())}
		p.urls[e.Name()] = AssetPrefix + hashed
	}
	funcs := template.FuncMap{"asset": func(name string) (string, error) {
		u, ok := p.urls[name]
		if !ok {
			return "", fmt.Errorf("web: no asset %q", name)
		}
		return u, nil
	}}
	for _, t := range []struct {
		dst  **template.Template
		name string
	}{{&p.admin, "admin.html"}, {&p.demo, "demo.html"}} {
		tpl, err := template.New(t.name).Funcs(funcs).ParseFS(files, "templates/"+t.name, "templates/head.html")
		if err != nil {
			return nil, err
		}
		*t.dst = tpl
	}
	return p, nil
}

// AssetURL is the hashed URL of the static file name ("" if none).
func (p *Pages) AssetURL(name string) string { return p.urls[name] }

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// secure sets the headers every page and asset carries.
func secure(w http.ResponseWriter, csp string) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// HandleAdmin serves GET /admin.
func (p *Pages) HandleAdmin(w http.ResponseWriter, r *http.Request) error {
	return p.page(w, p.admin, CSP)
}

// HandleDemo serves GET /demo.
func (p *Pages) HandleDemo(w http.ResponseWriter, r *http.Request) error {
	return p.page(w, p.demo, p.demoCSP)
}

func (p *Pages) page(w http.ResponseWriter, t *template.Template, csp string) error {
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		return apierr.Wrap(apierr.Internal, "", err)
	}
	secure(w, csp)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The page names its assets by hash, so it must be fetched anew to
	// pick up a new release; the assets themselves never change.
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write([]byte(b.String()))
	return err
}

// HandleAsset serves GET /web/{file}: a hashed file, cached for a year.
func (p *Pages) HandleAsset(w http.ResponseWriter, r *http.Request) error {
	a, ok := p.assets[r.PathValue("file")]
	if !ok {
		return apierr.New(apierr.NotFound, "")
	}
	secure(w, CSP)
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, err := w.Write(a.body)
	return err
}
