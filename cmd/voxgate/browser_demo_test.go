package main

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// The demo's chat against the simulator, through @voxgate/client (the
// page's script is the package's bundle): a turn with a tool shows its
// steps, the streamed text and the recipe cards; a write asks for
// confirmation, and allowing it completes the call; a refused turn says why.
func TestDemoChatInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t, demo.Migrations), func(c *config.Config) {
		c.Demo.Enabled = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	b := newBrowser(t)
	b.run(t, chromedp.Navigate(m.URL()+"/demo#token="+url.QueryEscape(mint(t, "demo-user", "", "pro"))))
	b.waitJS(t, "the page", `document.getElementById('token-state').textContent === 'token set'`)

	send := func(text string) {
		t.Helper()
		b.run(t, chromedp.SetValue(chromedp.CSS(`#chat-input`), text), chromedp.Click(chromedp.CSS(`#chat-send`)))
	}
	send("find me a pasta recipe")
	b.waitJS(t, "the turn's end", `!document.getElementById('chat-send').disabled && document.querySelectorAll('#chat-log .bot').length === 1`)
	got := evalJS[struct {
		Steps   []string `json:"steps"`
		Done    int      `json:"done"`
		Tools   []string `json:"tools"`
		Recipes int      `json:"recipes"`
		Titles  int      `json:"titles"`
		Text    string   `json:"text"`
		Error   string   `json:"error"`
	}](t, b, `({
		steps: [...document.querySelectorAll('#chat-log .step:not(.tool)')].map(e => e.dataset.status),
		done: document.querySelectorAll('#chat-log .step.done:not(.tool)').length,
		tools: [...document.querySelectorAll('#chat-log .step.tool')].map(e => e.textContent),
		recipes: document.querySelectorAll('#chat-log .card.recipe').length,
		titles: [...document.querySelectorAll('#chat-log .card.recipe h3')].filter(h => h.textContent && h.textContent !== 'Recipe').length,
		text: document.querySelector('#chat-log .bot').textContent,
		error: document.getElementById('chat-state').textContent })`)
	if len(got.Steps) == 0 || got.Done != len(got.Steps) {
		t.Errorf("status steps %v, %d complete; want some, all complete", got.Steps, got.Done)
	}
	if len(got.Tools) != 1 || got.Tools[0] != "search_recipes: finished" {
		t.Errorf("tool steps %q, want [search_recipes: finished]", got.Tools)
	}
	if got.Recipes == 0 || got.Titles != got.Recipes {
		t.Errorf("%d recipe cards, %d with titles; want some, all titled", got.Recipes, got.Titles)
	}
	if got.Text == "" || got.Error != "" {
		t.Errorf("streamed text %q, state %q", got.Text, got.Error)
	}

	// A write asks first; allowing it runs it and the turn completes.
	send("I had oatmeal for breakfast, please log it")
	b.waitJS(t, "the confirmation card", `!!document.querySelector('#chat-log .confirm button.allow') && !document.getElementById('chat-send').disabled`)
	if h := evalJS[string](t, b, `document.querySelector('#chat-log .confirm h3').textContent`); h != "Confirm: log_meal" {
		t.Errorf("confirmation card %q, want Confirm: log_meal", h)
	}
	b.run(t, chromedp.Click(chromedp.CSS(`#chat-log .confirm button.allow`)))
	b.waitJS(t, "the allowed call's completion", `[...document.querySelectorAll('#chat-log .step.tool')].some(e => e.textContent === 'log_meal: finished') &&
		document.querySelectorAll('#chat-log .bot').length === 2 && !document.getElementById('chat-send').disabled`)
	if s := evalJS[string](t, b, `document.getElementById('chat-state').textContent + [...document.querySelectorAll('#chat-log .err')].map(e => e.textContent).join()`); s != "" {
		t.Errorf("the page shows an error: %q", s)
	}
	b.screenshot(t, "demo-chat.png")

	// A refusal is the package's VoxgateError, shown in the pages' words.
	_ = evalJS[any](t, b, `sessionStorage.setItem('voxgate.token', 'not.a.token'); 0`)
	send("one more")
	b.waitJS(t, "the refusal", `document.getElementById('chat-state').classList.contains('error') && !document.getElementById('chat-send').disabled`)
	if s := evalJS[string](t, b, `document.getElementById('chat-state').textContent`); s != "Your token has expired or is not valid. Paste a fresh one." {
		t.Errorf("a refused turn shows %q", s)
	}
	b.noViolations(t)
}
