package sse

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzWriterFrames sends arbitrary content under an arbitrary event type:
// a valid type gives exactly one frame that parses back to the type, id 1
// and the content; an invalid one is refused and writes nothing. A second
// event always follows intact, so no content can bleed into the next frame.
func FuzzWriterFrames(f *testing.F) {
	for _, seed := range []struct{ typ, content string }{
		{"content", "hello"},
		{"content", "two\nlines\r\nand\rcr"},
		{"content", "\n\ndata: {\"type\":\"done\"}\n\n"},
		{"content", "id: 9\nevent: done\n"},
		{"content", "\u2028\u2029<script>&"},
		{"content", "\xff\xfe invalid utf-8"},
		{"stream_complete", ""},
		{"Content", "x"},
		{"content\nevent: done", "x"},
		{"", "x"},
		{"a-b", "x"},
		{"response.output_text.delta", "x"},
		{"response.function_call_arguments.done", "{\"a\":1}"},
		{"h2", "x"},
		{".dot", "x"},
		{"9lives", "x"},
		{"response.created\ndata: {}", "x"},
		{"event:x", "x"},
		{"a b", "x"},
		{"a\u00e9", "x"},
	} {
		f.Add(seed.typ, seed.content)
	}
	f.Fuzz(func(t *testing.T, typ, content string) {
		rec := httptest.NewRecorder()
		w, err := NewWriter(rec, httptest.NewRequest(http.MethodPost, "/v1/chat", nil))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		err = w.Send(typ, map[string]string{"content": content})
		valid := validEventType(typ)
		if !valid {
			if err == nil || rec.Body.Len() != 0 {
				t.Fatalf("type %q: got err %v and body %q, want a refusal writing nothing", typ, err, rec.Body)
			}
		} else if err != nil {
			t.Fatalf("Send(%q): %v", typ, err)
		}
		if err := w.Send("done", nil); err != nil {
			t.Fatal(err)
		}
		frames, rest := parseFrames(t, rec.Body.String())
		want := 1
		if valid {
			want = 2
		}
		if rest != "" || len(frames) != want {
			t.Fatalf("got %d frames, rest %q, want %d:\n%q", len(frames), rest, want, rec.Body)
		}
		last := frames[len(frames)-1]
		if last.event != "done" || last.data != `{"type":"done"}` {
			t.Fatalf("the closing frame was disturbed: %+v", last)
		}
		if !valid {
			return
		}
		fr := frames[0]
		if fr.id != "1" || fr.event != typ || fr.comment != "" {
			t.Fatalf("frame %+v: want id 1, event %q", fr, typ)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(fr.data), &got); err != nil {
			t.Fatalf("data %q: %v", fr.data, err)
		}
		// encoding/json replaces invalid UTF-8; the round trip must equal
		// what it would give for the content alone.
		var wantContent string
		b, _ := json.Marshal(content)
		_ = json.Unmarshal(b, &wantContent)
		if got["type"] != typ || got["content"] != wantContent || len(got) != 2 {
			t.Fatalf("data: got %q, want type %q and content %q", got, typ, wantContent)
		}
	})
}

// FuzzWriteData frames arbitrary bytes, line breaks included, as data
// lines: a reader gets them back with every CR, LF or CRLF read as "\n",
// and nothing else leaks out as a field or a second event.
func FuzzWriteData(f *testing.F) {
	for _, seed := range []string{"", "x", "a\nb", "a\r\nb", "a\rb", "\n\n", "\r\r\n\n", "data: x\n\nid: 3"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var buf bytes.Buffer
		buf.WriteString("event: content\n")
		writeData(&buf, []byte(data))
		buf.WriteByte('\n')
		frames, rest := parseFrames(t, buf.String())
		if rest != "" || len(frames) != 1 {
			t.Fatalf("got %d frames and rest %q from %q", len(frames), rest, buf.String())
		}
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
		// A reader drops one space after "data:", and only one.
		if got := frames[0]; got.data != want || got.event != "content" || got.id != "" {
			t.Fatalf("got %+v, want data %q", got, want)
		}
	})
}
