package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// FuzzExecuteArguments sends arbitrary argument bytes through the whole
// executor and the real tool_calls table. Whatever comes in, a call is
// either refused as a validation error or runs once and replays the same.
//
//	go test ./tools -run '^$' -fuzz FuzzExecuteArguments -fuzztime 60s
func FuzzExecuteArguments(f *testing.F) {
	rich := echoTool("rich")
	rich.Parameters = json.RawMessage(`{"type":"object","properties":{
		"q":{"type":"string","maxLength":200},
		"tags":{"type":"array","items":{"type":"string"},"maxItems":10},
		"max":{"type":"number","minimum":0,"maximum":1e6},
		"opt":{"type":"object","additionalProperties":{"type":["string","number","boolean","null"]}}},
		"additionalProperties":false}`)
	e := mustExecutor(f, pgtest.Pool(f), mustRegistry(f, RegistryParams{Builtins: []*Tool{echoTool("echo"), rich}}))
	for _, s := range []string{
		`{"text":"hi"}`, `"{\"text\":\"hi\"}"`, ``, `null`, `""`, `"   "`, `{}`, `[]`, `42`, `"42"`,
		`{"text":"a","n":1e400}`, `{"text":"\u0000"}`, `{"text":"\ud800"}`, `{"text":"a"} {"x":1}`,
		`{"q":"pasta","tags":["a","b"],"max":30,"opt":{"k":null}}`, `{"max":1e1000000}`, `{"opt":{"a":{"b":1}}}`,
		`{"text":"` + "\xff\xfe" + `"}`, `{"text":"a","text":"b"}`,
	} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, useRich bool, args []byte) {
		name := "echo"
		if useRich {
			name = "rich"
		}
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		c := chatCall("fuzz", hex.EncodeToString(b), name, string(args))
		r, err := e.Execute(context.Background(), c)
		if err != nil {
			if code := apierr.CodeOf(err); code != apierr.ToolValidation {
				t.Fatalf("args %q: got %v, want success or TOOL_VALIDATION_ERROR", args, err)
			}
			return
		}
		if r.Error != nil || !json.Valid([]byte(r.Output)) || !json.Valid(r.Result) {
			t.Fatalf("args %q: got %+v", args, r)
		}
		again, err := e.Execute(context.Background(), c)
		if err != nil || !again.Replayed || again.Output != r.Output {
			t.Fatalf("args %q: replay got %+v, %v; first %s", args, again, err, r.Output)
		}
	})
}
