package sse

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Data writes OpenAI's frame, a data line alone with no id or event name,
// and counts no id; DataLast writes once after the request's context
// ended, as SendLast does, and nothing is written after it.
func TestDataFrames(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	w, err := NewWriter(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil).WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Data([]byte(`{"id":"chatcmpl-1"}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Send("session", nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := w.Data([]byte(`{"late":true}`)); !errors.Is(err, ErrGone) {
		t.Fatalf("Data after the context ended: got %v, want ErrGone", err)
	}
	if err := w.DataLast([]byte(`{"error":{"code":"UNAVAILABLE"}}`)); err != nil {
		t.Fatalf("DataLast after the context ended: %v", err)
	}
	if err := w.DataLast([]byte(`[DONE]`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("a second DataLast: got %v, want ErrClosed", err)
	}
	want := "data: {\"id\":\"chatcmpl-1\"}\n\n" +
		"id: 1\nevent: session\ndata: {\"type\":\"session\"}\n\n" +
		"data: {\"error\":{\"code\":\"UNAVAILABLE\"}}\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}
