package web_test

import (
	"bytes"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/web"
)

func mustPages(t *testing.T) *web.Pages {
	t.Helper()
	p, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serve runs h on one request and returns the response.
func serve(t *testing.T, pattern string, h httpx.HandlerFunc, target string) *http.Response {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(pattern, httpx.Handle(h))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	assetRef    = regexp.MustCompile(`(?:src|href)="(/web/[^"]+)"`)
	inlineThing = regexp.MustCompile(`(?i)\sstyle=|\son[a-z]+=|<script>|<script [^>]*>[^<]|<style|javascript:`)
)

// Each page carries the CSP header, names its assets by content hash, has
// no inline script, style or handler, and weighs at most 30 KB with them.
func TestPagesAreStrictAndSmall(t *testing.T) {
	t.Parallel()
	p := mustPages(t)
	for _, c := range []struct {
		name string
		h    httpx.HandlerFunc
	}{{"/admin", p.HandleAdmin}, {"/demo", p.HandleDemo}} {
		resp := serve(t, "GET "+c.name, c.h, c.name)
		html := body(t, resp)
		if got := resp.Header.Get("Content-Security-Policy"); got != web.CSP {
			t.Errorf("%s: CSP %q, want %q", c.name, got, web.CSP)
		}
		for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "script-src 'self';"} {
			if !strings.Contains(web.CSP, want) {
				t.Errorf("CSP lacks %q", want)
			}
		}
		if strings.Contains(web.CSP, "unsafe-inline") || strings.Contains(web.CSP, "unsafe-eval") {
			t.Error("CSP allows inline code")
		}
		if m := inlineThing.FindString(html); m != "" {
			t.Errorf("%s has inline code or style: %q", c.name, m)
		}
		weight := len(html)
		refs := assetRef.FindAllStringSubmatch(html, -1)
		if len(refs) < 2 {
			t.Fatalf("%s: got %d asset references, want a stylesheet and scripts", c.name, len(refs))
		}
		for _, ref := range refs {
			a := serve(t, "GET /web/{file}", p.HandleAsset, ref[1])
			b := body(t, a)
			if a.StatusCode != 200 || a.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
				t.Errorf("%s: %d, Cache-Control %q", ref[1], a.StatusCode, a.Header.Get("Cache-Control"))
			}
			if !regexp.MustCompile(`^/web/[0-9a-f]{12}\.`).MatchString(ref[1]) {
				t.Errorf("%s is not content-hashed", ref[1])
			}
			if m := regexp.MustCompile(`\.innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(`).FindString(b); m != "" {
				t.Errorf("%s uses %s", ref[1], m)
			}
			weight += len(b)
		}
		if weight > 30*1024 {
			t.Errorf("%s weighs %d bytes with its assets, want at most 30 KB", c.name, weight)
		}
		t.Logf("%s: %d bytes with its assets", c.name, weight)
	}
}

func TestUnknownAssetIs404(t *testing.T) {
	t.Parallel()
	p := mustPages(t)
	for _, target := range []string{"/web/admin.js", "/web/000000000000.admin.js", "/web/..%2fweb.go"} {
		r := serve(t, "GET /web/{file}", p.HandleAsset, target)
		if b := body(t, r); r.StatusCode != 404 || !strings.Contains(b, `"NOT_FOUND"`) {
			t.Errorf("%s: got %d %s, want 404 NOT_FOUND", target, r.StatusCode, b)
		}
	}
}

func TestDollarsIsExact(t *testing.T) {
	t.Parallel()
	huge, _ := new(big.Int).SetString("123456789012345678901234", 10)
	for _, c := range []struct {
		in   *big.Int
		want string
	}{
		{big.NewInt(0), "$0.000000"},
		{big.NewInt(1), "$0.000001"},
		{big.NewInt(1234567), "$1.234567"},
		{big.NewInt(-50), "-$0.000050"},
		{huge, "$123456789012345678.901234"},
	} {
		if got := web.Dollars(c.in); got != c.want {
			t.Errorf("Dollars(%s): got %q, want %q", c.in, got, c.want)
		}
	}
}

// The chart draws one bar per day, the largest at full height, a day that
// cost anything at least one unit high, and escapes every label.
func TestRenderChart(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	days := []web.Day{
		{Key: "2026-11-01", CostMicros: big.NewInt(2_000_000)},
		{Key: "2026-11-02", CostMicros: big.NewInt(1)},
		{Key: `<script>x</script>`, CostMicros: big.NewInt(1_000_000), Unpriced: 2},
	}
	if err := web.RenderChart(&b, days); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if n := strings.Count(svg, `<rect class="bar"`); n != 3 {
		t.Errorf("got %d bars, want 3", n)
	}
	for _, want := range []string{`height="170"`, `height="85"`, `height="1"`, "2026-11-01: $2.000000", "max $2.000000 a day", "&lt;script&gt;", ", and 2 unpriced"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "<script>") {
		t.Error("a day key reached the SVG unescaped")
	}
	b.Reset()
	if err := web.RenderChart(&b, nil); err != nil || !strings.Contains(b.String(), "No records in this range.") {
		t.Errorf("empty chart: %v %s", err, b.String())
	}
}

// The chart always asks the summary by day and passes the caller's
// filters through untouched; a group_by of the caller's own is refused.
func TestChartAsksTheSummaryByDay(t *testing.T) {
	t.Parallel()
	var got string
	summary := func(w http.ResponseWriter, r *http.Request) error {
		got = r.URL.RawQuery
		httpx.WriteJSON(w, 200, map[string]any{"groups": []map[string]any{{"key": "2026-11-01", "records": 1, "unpriced": 0, "cost_micros": 12345678901234567}}})
		return nil
	}
	r := serve(t, "GET /c", web.Chart(summary), "/c?from=2026-11-01&user_id=bob")
	svg := body(t, r)
	if got != "from=2026-11-01&user_id=bob&group_by=day" {
		t.Errorf("summary saw %q", got)
	}
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/svg+xml; charset=utf-8" || !strings.Contains(svg, "$12345678901.234567") {
		t.Errorf("got %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), svg)
	}
	if r.Header.Get("Content-Security-Policy") != web.CSP {
		t.Error("the chart lacks the CSP header")
	}
	r = serve(t, "GET /c", web.Chart(summary), "/c?group_by=user")
	if b := body(t, r); r.StatusCode != 400 || !strings.Contains(b, "INVALID_REQUEST") {
		t.Errorf("group_by=user: got %d %s, want 400", r.StatusCode, b)
	}
}

// /demo's policy names the provider's origin for direct-mode calls, and
// only that; /admin's stays the strict one. What is not a bare origin is
// refused at startup.
func TestDemoPolicyNamesTheDirectOrigin(t *testing.T) {
	p, err := web.New("http://127.0.0.1:8089")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		h    func(http.ResponseWriter, *http.Request) error
		want string
	}{
		{"/demo", p.HandleDemo, strings.Replace(web.CSP, "connect-src 'self'", "connect-src 'self' http://127.0.0.1:8089", 1)},
		{"/admin", p.HandleAdmin, web.CSP},
	} {
		rec := httptest.NewRecorder()
		if err := c.h(rec, httptest.NewRequest("GET", c.path, nil)); err != nil {
			t.Fatal(err)
		}
		if got := rec.Header().Get("Content-Security-Policy"); got != c.want || strings.Contains(got, "unsafe") {
			t.Errorf("%s: CSP %q, want %q", c.path, got, c.want)
		}
	}
	for _, bad := range []string{"127.0.0.1:8089", "https://x.example/v1", "https://x.example; script-src *", "javascript:alert(1)", "https://user@x.example", "'self'"} {
		if _, err := web.New(bad); err == nil {
			t.Errorf("%q was taken as an origin", bad)
		}
	}
}

// Each page names its icon, an embedded SVG, so a browser never asks for
// /favicon.ico (a 404 in every browser test's log before).
func TestPagesNameTheirIcon(t *testing.T) {
	t.Parallel()
	p := mustPages(t)
	icon := regexp.MustCompile(`<link rel="icon" type="image/svg\+xml" href="(/web/[0-9a-f]{12}\.favicon\.svg)">`)
	for _, c := range []struct {
		name string
		h    httpx.HandlerFunc
	}{{"/admin", p.HandleAdmin}, {"/demo", p.HandleDemo}} {
		m := icon.FindStringSubmatch(body(t, serve(t, "GET "+c.name, c.h, c.name)))
		if m == nil {
			t.Fatalf("%s names no icon", c.name)
		}
		r := serve(t, "GET /web/{file}", p.HandleAsset, m[1])
		if b := body(t, r); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(b, "<svg ") || strings.Contains(b, "<script") {
			t.Errorf("%s: %d %q %.60s", m[1], r.StatusCode, r.Header.Get("Content-Type"), b)
		}
	}
}
