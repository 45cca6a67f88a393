package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// failoverLoad is what the failover test's clients saw: each request's
// outcome, and for every success the key its usage record must carry.
type failoverLoad struct {
	mu       sync.Mutex
	requests []loadResult
}

// loadResult is one request as its client saw it.
type loadResult struct {
	user, kind string // kind: chat, completion, voice
	start, end time.Time
	admittedAt time.Time // when the client learnt it was admitted
	status     int       // the HTTP status of the admitting call
	admitted   bool      // admission succeeded (a session event, a 200, a 201)
	ok         bool      // the request succeeded as a whole (done, 200, an ended voice session)
	spent      bool      // the provider was paid: a chat turn streamed content
	key        string    // chat: session id; completion: its id; voice: session id
	stuck      bool      // the client gave up waiting
	err        string
}

func (l *failoverLoad) add(r loadResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r)
}

func (l *failoverLoad) snapshot() []loadResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loadResult(nil), l.requests...)
}

// clientTimeout is how long a client waits for any one call; a call that
// outlasts it is counted stuck.
const clientTimeout = 30 * time.Second

func loadDo(ctx context.Context, client *http.Client, method, url, tok, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	return client.Do(req)
}

func timedOut(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "Client.Timeout") || strings.Contains(err.Error(), "deadline exceeded"))
}

// loadChat runs one chat turn in a new session (its record's key) that
// calls the demo's recipe search.
func loadChat(client *http.Client, base, user, tok string) loadResult {
	r := loadResult{user: user, kind: "chat", start: time.Now()}
	defer func() { r.end = time.Now() }()
	resp, err := loadDo(context.Background(), client, "POST", base+"/v1/chat", tok, `{"message":"find me a pasta recipe"}`)
	if err != nil {
		r.stuck, r.err = timedOut(err), err.Error()
		return r
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type      string `json:"type"`
			SessionID string `json:"session_id"`
			Code      string `json:"code"`
		}
		if json.Unmarshal([]byte(data), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "session":
			r.admitted, r.key, r.admittedAt = true, ev.SessionID, time.Now()
		case "content":
			r.spent = true
		case "done":
			r.ok = true
		case "error":
			r.err = ev.Code
		}
	}
	if err := sc.Err(); err != nil {
		r.stuck, r.err = timedOut(err), err.Error()
	}
	return r
}

// loadCompletion runs one non-streamed completion; its id keys its record.
func loadCompletion(client *http.Client, base, user, tok, model string) loadResult {
	r := loadResult{user: user, kind: "completion", start: time.Now()}
	defer func() { r.end = time.Now() }()
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hello"}]}`, model)
	resp, err := loadDo(context.Background(), client, "POST", base+"/v1/chat/completions", tok, body)
	if err != nil {
		r.stuck, r.err = timedOut(err), err.Error()
		return r
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.stuck, r.err = timedOut(err), err.Error()
		return r
	}
	var out struct {
		ID string `json:"id"`
	}
	if resp.StatusCode == 200 && json.Unmarshal(b, &out) == nil && out.ID != "" {
		r.admitted, r.ok, r.key, r.admittedAt = true, true, out.ID, time.Now()
	} else {
		r.err = strings.TrimSpace(string(b))
	}
	return r
}

// loadVoice starts a direct voice session, runs a tool call and ends it
// with usage. An end answered 503 (its job spooled) is retried until the
// session is ended, as a client following Retry-After does: the ended
// session then carries its record.
func loadVoice(client *http.Client, base, user, tok string, n int) loadResult {
	r := loadResult{user: user, kind: "voice", start: time.Now()}
	defer func() { r.end = time.Now() }()
	call := func(method, url, body string) (int, string, error) {
		resp, err := loadDo(context.Background(), client, method, url, tok, body)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	status, body, err := call("POST", base+"/v1/voice/sessions", `{"replace":true}`)
	r.status = status
	if err != nil {
		r.stuck, r.err = timedOut(err), err.Error()
		return r
	}
	var start struct {
		SessionID string `json:"session_id"`
	}
	if status != 201 || json.Unmarshal([]byte(body), &start) != nil || start.SessionID == "" {
		r.err = body
		return r
	}
	r.admitted, r.key, r.admittedAt = true, start.SessionID, time.Now()
	sess := base + "/v1/voice/sessions/" + start.SessionID
	_, _, _ = call("POST", sess+"/tool-calls", fmt.Sprintf(`{"call_id":"c%d","name":"search_recipes","arguments":"{\"query\":\"pasta\"}"}`, n))
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, body, err = call("POST", sess+"/end", `{"usage":{"input_token_details":{"text_tokens":300},"output_token_details":{"audio_tokens":100}}}`)
		if err == nil && status == 200 {
			r.ok = true
			return r
		}
		if err != nil && timedOut(err) {
			r.stuck, r.err = true, err.Error()
			return r
		}
		if time.Now().After(deadline) {
			r.err = fmt.Sprintf("end: %d %s %v", status, body, err)
			return r
		}
		time.Sleep(250 * time.Millisecond) // measurement window: an app's retry pace, part of the load the failover is measured under
	}
}
