package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// chromiumPath is Debian's chromium, which scripts/chromium.sh installs.
const chromiumPath = "/usr/bin/chromium"

// browser is one headless Chromium with a fresh profile. Everything the
// page reports to its console (CSP violations among it) and every
// uncaught exception is kept, for the test to check.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	logs []string
}

// newBrowser starts Chromium for t. Without it the test skips, except
// under CI=true, where it fails.
func newBrowser(t *testing.T, extraFlags ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing (run scripts/chromium.sh): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing; scripts/chromium.sh installs it", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1000),
	}
	opts = append(opts, extraFlags...)
	// A loaded 2-core machine can take a while to start a browser and run
	// a turn; this bounds the whole test, not any one step.
	ctx, cancelTimeout := context.WithTimeout(context.Background(), 3*time.Minute)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancelTimeout() })
	b := &browser{ctx: bctx}
	// Open the tab first so the listener misses none of the page's events.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if err := chromedp.Listen(bctx, b.record); err != nil {
		t.Fatal(err)
	}
	// The Log domain carries what the browser itself reports, CSP
	// violations among it.
	enable := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdplog.Enable, cdp.Empty{})
		return err
	})
	if err := chromedp.Do(bctx, enable); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *browser) record(ev any) {
	var line string
	switch e := ev.(type) {
	case *cdplog.EventEntryAdded:
		line = string(e.Entry.Level) + " " + string(e.Entry.Source) + ": " + e.Entry.Text
		if e.Entry.URL != "" {
			line += " " + e.Entry.URL
		}
	case *runtime.EventExceptionThrown:
		line = "exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			line += " " + e.ExceptionDetails.Exception.Description
		}
	case *runtime.EventConsoleAPICalled:
		line = "console." + string(e.Type) + ":"
		for _, a := range e.Args {
			line += " " + string(a.Value) + a.Description
		}
	default:
		return
	}
	b.mu.Lock()
	b.logs = append(b.logs, line)
	b.mu.Unlock()
}

// run runs actions, failing t on error.
func (b *browser) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("browser: %v\nconsole:\n%s", err, b.console())
	}
}

func (b *browser) console() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.logs, "\n")
}

// noViolations fails t when the browser reported a CSP violation, an
// uncaught exception, or a failed load of /favicon.ico (the pages name
// their icon, so a browser has no reason to ask for that).
func (b *browser) noViolations(t *testing.T) {
	t.Helper()
	for _, l := range strings.Split(b.console(), "\n") {
		if strings.Contains(l, "Content Security Policy") || strings.Contains(l, "Content-Security-Policy") || strings.HasPrefix(l, "exception:") ||
			strings.Contains(l, "/favicon.ico") {
			t.Errorf("the browser reported: %s", l)
		}
	}
}

// waitJS polls expr in the page until it is true.
func (b *browser) waitJS(t *testing.T, what, expr string) {
	t.Helper()
	ok, err := chromedp.Run(b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(90*time.Second)))
	if err != nil || !ok {
		html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("body")))
		t.Fatalf("waiting for %s (%s): %v\nconsole:\n%s\npage:\n%s", what, expr, err, b.console(), html)
	}
}

// screenshot writes the page under $VOXGATE_TEST_ARTIFACTS, else the
// test's temporary directory, and returns the file's path.
func (b *browser) screenshot(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("VOXGATE_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // 100 is PNG
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(png) < 1000 {
		t.Fatalf("screenshot %s is %d bytes", path, len(png))
	}
	t.Logf("screenshot: %s", path)
	return path
}

// evalJS evaluates expr in b's page.
func evalJS[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v\nconsole:\n%s", expr, err, b.console())
	}
	return v
}

// voiceBrowser is a gateway with the demo on, voice in sideband mode over
// the simulator and the relay's candidates on loopback (as voxgate dev
// keeps them: the test's namespace has no other interface, and pion leaves
// loopback out unless told), and a Chromium with a fake microphone that may
// make WebRTC calls on loopback: what every browser voice test starts from.
// change, when not nil, adjusts the configuration after that. The
// gateway's log is returned for a failure to show.
func voiceBrowser(t *testing.T, change func(*config.Config)) (*Main, *browser, *logbuf.Buffer) {
	t.Helper()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, logs := startMain(t, pgtest.URL(t, demo.Migrations), func(c *config.Config) {
		c.Demo.Enabled = true
		c.Voice.Mode = "sideband"
		c.Voice.Relay.Loopback = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
		if change != nil {
			change(c)
		}
	})
	b := newBrowser(t,
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("allow-loopback-in-peer-connection", true),
		chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns"),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
	)
	return m, b, logs
}
