package main

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/internal/pgtest"
)

// A token in the link's fragment (docs/web.md): one that cannot be read
// is an error on the page, not a dead page; with no token held it is
// taken; with another user's token held the page names the link's user
// and switches only if asked, so a link cannot sign someone in as another
// user (login CSRF). In every case the fragment leaves the address bar.
func TestTokenInTheFragmentInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	m, _ := startMain(t, pgtest.URL(t), nil)
	alice, mallory := mint(t, "alice", "", "pro"), mint(t, "mallory", "", "pro")
	b := newBrowser(t)
	type page struct {
		Href    string `json:"href"`
		Held    string `json:"held"`
		State   string `json:"state"`
		Error   bool   `json:"error"`
		Asking  bool   `json:"asking"`
		Message string `json:"message"`
	}
	look := func() page {
		t.Helper()
		return evalJS[page](t, b, `(() => {
			const bar = document.getElementById('token-switch'), st = document.getElementById('token-state');
			return { href: location.href, held: sessionStorage.getItem('voxgate.token') || '',
				state: st.textContent, error: st.classList.contains('error'),
				asking: !!bar && !bar.hidden, message: bar ? bar.textContent : '' };
		})()`)
	}
	asking := `!!document.getElementById('token-switch') && !document.getElementById('token-switch').hidden`
	bare := func(p page, path string) {
		t.Helper()
		if p.Href != m.URL()+path {
			t.Errorf("address bar %q, want %q: the fragment must go", p.Href, m.URL()+path)
		}
	}

	t.Log("a malformed token: an error shown, nothing kept")
	b.run(t, chromedp.Navigate(m.URL()+"/admin#token=%E0%A4%A"))
	b.waitJS(t, "the error", `document.getElementById('token-state').classList.contains('error')`)
	p := look()
	bare(p, "/admin")
	if p.Held != "" || p.Asking || p.State != "The token in the link could not be read; paste a token instead." {
		t.Errorf("after a malformed token: %+v, want the error and no token", p)
	}

	t.Log("no token held: the link's token is taken")
	b.run(t, chromedp.Navigate(m.URL()+"/demo#token="+url.QueryEscape(alice)))
	b.waitJS(t, "the token", `document.getElementById('token-state').textContent === 'token set'`)
	p = look()
	bare(p, "/demo")
	if p.Held != alice || p.Asking {
		t.Errorf("with no token held: %+v, want alice's token taken unasked", p)
	}

	t.Log("another user's token while alice's is held: asked, declined")
	b.run(t, chromedp.Navigate(m.URL()+"/demo#token="+url.QueryEscape(mallory)))
	b.waitJS(t, "the question", asking)
	p = look()
	bare(p, "/demo")
	if p.Held != alice || p.Message != "This link carries a token for user “mallory”; this tab uses “alice”. Switch to “mallory” Keep “alice”" {
		t.Errorf("asked: %+v, want alice's token held and the question naming mallory and alice", p)
	}
	b.run(t, chromedp.Click(chromedp.CSS(`#token-switch button.keep`)))
	b.waitJS(t, "the question to go", `document.getElementById('token-switch').hidden`)
	if p = look(); p.Held != alice {
		t.Errorf("declined: %+v, want alice's token still held", p)
	}

	t.Log("the same link on a page's first load: asked, accepted")
	b.run(t, chromedp.Navigate(m.URL()+"/admin#token="+url.QueryEscape(mallory)))
	b.waitJS(t, "the question", asking)
	p = look()
	bare(p, "/admin")
	if p.Held != alice {
		t.Errorf("asked on load: %+v, want alice's token held until the switch", p)
	}
	b.run(t, chromedp.Click(chromedp.CSS(`#token-switch button.switch`)))
	b.waitJS(t, "the switch", `sessionStorage.getItem('voxgate.token') === `+jsString(mallory)+` && document.getElementById('token-switch').hidden`)
	if p = look(); p.State != "token set" {
		t.Errorf("accepted: %+v, want mallory's token set", p)
	}
	b.noViolations(t)
}

// acceptSwitch answers yes to the page's question about a link's token,
// for a test that moves one tab from one user's token to another's.
func (b *browser) acceptSwitch(t *testing.T) {
	t.Helper()
	b.waitJS(t, "the question about the link's token", `!!document.getElementById('token-switch') && !document.getElementById('token-switch').hidden`)
	b.run(t, chromedp.Click(chromedp.CSS(`#token-switch button.switch`)))
}
