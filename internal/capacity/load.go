package capacity

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Target is where a load goes: a chat completions URL and, per client,
// the Authorization header to send (empty for none).
type Target struct {
	URL  string
	Auth func(client int) string
}

// Load is one run: Clients concurrent clients, each sending requests
// back to back for Duration, streamed or not.
type Load struct {
	Clients  int
	Duration time.Duration
	Stream   bool
	Model    string
}

// Result is what a run measured from the client's side. Latency is, for a
// streamed request, the time to its first content; otherwise the time to
// the whole answer.
type Result struct {
	Requests int
	Failed   int
	Elapsed  time.Duration
	Latency  []time.Duration // sorted
	// FirstError is the first failure's text, for the report.
	FirstError string
}

// PerSecond is the run's completed requests per second.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Quantile is the q-quantile of the latencies (nearest rank).
func (r Result) Quantile(q float64) time.Duration {
	if len(r.Latency) == 0 {
		return 0
	}
	i := int(q*float64(len(r.Latency))+0.5) - 1
	return r.Latency[min(max(i, 0), len(r.Latency)-1)]
}

// Run sends l to t and returns what it measured. A failed request (a
// non-200, a stream that does not end with [DONE]) is counted, not timed.
func Run(ctx context.Context, client *http.Client, t Target, l Load) Result {
	return RunWith(ctx, l, func(ctx context.Context, c, n int) (time.Duration, error) {
		return one(ctx, client, t, l, c, n)
	})
}

// RunWith is Run's load for any request: l.Clients clients each send
// request after request for l.Duration; request sends client c's nth
// and times it, and an error counts it as failed instead.
func RunWith(ctx context.Context, l Load, request func(ctx context.Context, c, n int) (time.Duration, error)) Result {
	ctx, cancel := context.WithTimeout(ctx, l.Duration)
	defer cancel()
	var mu sync.Mutex
	var res Result
	var wg sync.WaitGroup
	began := time.Now()
	for c := range l.Clients {
		wg.Go(func() {
			var mine []time.Duration
			failed, first := 0, ""
			for n := 0; ctx.Err() == nil; n++ {
				d, err := request(context.WithoutCancel(ctx), c, n)
				if err != nil {
					failed++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				mine = append(mine, d)
			}
			mu.Lock()
			res.Latency = append(res.Latency, mine...)
			res.Failed += failed
			if res.FirstError == "" {
				res.FirstError = first
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(began)
	res.Requests = len(res.Latency)
	slices.Sort(res.Latency)
	return res
}

// one sends client c's nth request and times it.
func one(ctx context.Context, client *http.Client, t Target, l Load, c, n int) (time.Duration, error) {
	body := fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"Suggest a quick lunch, please (%d.%d)."}]}`,
		l.Model, l.Stream, c, n)
	if l.Stream {
		body = strings.Replace(body, `"stream":true`, `"stream":true,"stream_options":{"include_usage":true}`, 1)
	}
	resp, began, err := Send(ctx, client, t, c, body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if !l.Stream {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, err
		}
		return time.Since(began), nil
	}
	return TimeStream(resp.Body, began,
		func(line []byte) bool {
			return bytes.Contains(line, []byte(`"content":"`)) && !bytes.Contains(line, []byte(`"content":""`))
		},
		func(line []byte) bool { return bytes.Equal(line, []byte("data: [DONE]")) })
}

// Send posts body to t as client c (its Authorization from t.Auth) and
// returns the response, open, with the time it was sent; a status other
// than 200 is an error naming it, its body closed.
func Send(ctx context.Context, client *http.Client, t Target, c int, body string) (*http.Response, time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, strings.NewReader(body))
	if err != nil {
		return nil, time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.Auth != nil {
		if a := t.Auth(c); a != "" {
			req.Header.Set("Authorization", a)
		}
	}
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, began, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, began, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return resp, began, nil
}

// TimeStream reads an event stream to its end and returns the time from
// began to the first line first accepts; a stream without such a line or
// without a line done accepts is an error.
func TimeStream(r io.Reader, began time.Time, first, done func(line []byte) bool) (time.Duration, error) {
	var at time.Duration
	ended := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case at == 0 && first(line):
			at = time.Since(began)
		case done(line):
			ended = true
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !ended || at == 0 {
		return 0, fmt.Errorf("the stream ended without its first content and its end")
	}
	return at, nil
}

// Counters reads the named counters (without labels) from a Prometheus
// text exposition at url: the gateway's statements and round trips to
// PostgreSQL. A counter the page lacks is absent from the map.
func Counters(ctx context.Context, client *http.Client, url string, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("capacity: %s answered %d", url, resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("capacity: %s: %w", name, err)
		}
		out[name] = v
	}
	return out, sc.Err()
}
