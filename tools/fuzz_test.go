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

// FuzzExecuteSQLArguments is FuzzExecuteArguments for a tool on the SQL
// fast path, whose arguments reach the database as statement parameters.
//
//	go test ./tools -run '^$' -fuzz FuzzExecuteSQLArguments -fuzztime 60s
func FuzzExecuteSQLArguments(f *testing.F) {
	var n sqlCounts
	tool := sqlTool("fast", nonceSQL, &n, nil)
	tool.Parameters = json.RawMessage(`{"type":"object","properties":{
		"text":{"type":"string","maxLength":200},
		"tags":{"type":"array","items":{"type":"string"},"maxItems":10},
		"max":{"type":"number","minimum":-1e6,"maximum":1e6}},
		"additionalProperties":false}`)
	tool.SQL.Build = func(inv Invocation) (string, []any, error) {
		var a struct {
			Text string
			Tags []string
			Max  float64
		}
		if err := inv.Decode(&a); err != nil {
			return "", nil, err
		}
		return `SELECT md5(random()::text), $1::text || array_to_string($2::text[], ',') || $3::float8::text`,
			[]any{a.Text, a.Tags, a.Max}, nil
	}
	e := mustExecutor(f, pgtest.Pool(f), mustRegistry(f, RegistryParams{Builtins: []*Tool{tool}}))
	for _, s := range []string{
		`{"text":"hi"}`, `"{\"text\":\"hi\"}"`, ``, `{}`, `{"tags":["a","b,c","\"q\""],"max":-0.5}`,
		`{"text":"\u0000"}`, `{"text":"\ud800"}`, `{"tags":[null]}`, `{"max":1e400}`, `{"text":"` + "\xff" + `"}`,
		`{"text":"'; DROP TABLE tool_calls; --"}`, `{"tags":["{","}"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		c := chatCall("fuzz", hex.EncodeToString(b), "fast", string(args))
		r, err := e.Execute(context.Background(), c)
		if err != nil {
			if code := apierr.CodeOf(err); code != apierr.ToolValidation {
				t.Fatalf("args %q: got %v, want success or TOOL_VALIDATION_ERROR", args, err)
			}
			return
		}
		if !json.Valid([]byte(r.Output)) || !json.Valid(r.Result) {
			t.Fatalf("args %q: got %+v", args, r)
		}
		again, err := e.Execute(context.Background(), c)
		if err != nil || !again.Replayed || again.Output != r.Output {
			t.Fatalf("args %q: replay got %+v, %v; first %s", args, again, err, r.Output)
		}
	})
}
