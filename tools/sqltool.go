package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
	pganalyze "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/voxgate/voxgate/internal/config"
)

// openSQLParams is the one argument of an open SQL tool.
var openSQLParams = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"sql":{"type":"string",
	"minLength":1,"maxLength":%d,"description":"One PostgreSQL SELECT over the listed views. The user's own rows only; at most 100 rows come back."}},
	"required":["sql"],"additionalProperties":false}`, MaxOpenSQLBytes))

// NewSQLTool builds a SQL tool from its definition (config's tools.sql,
// or a built-in such as the demo's query_my_data): an open tool checks
// each statement the model writes; a fixed tool's query is checked here,
// once, and a query that does not parse, is not one SELECT or names
// anything outside the views is refused.
func NewSQLTool(db *pgxpool.Pool, d config.SQLTool) (*Tool, error) {
	if db == nil {
		return nil, errors.New("tools: a SQL tool needs the database")
	}
	funcs := d.Functions
	if len(funcs) == 0 {
		funcs = DefaultSQLFunctions
	}
	chk, err := newSQLChecker(d.Views, funcs)
	if err != nil {
		return nil, err
	}
	if d.StatementTimeout < 0 || d.StatementTimeout > MaxTimeout {
		return nil, broken("statement_timeout", "must be between 0 (default %s) and %s", DefaultStatementTimeout, MaxTimeout)
	}
	timeout := d.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	st := d.StatementTimeout
	if st == 0 {
		st = min(DefaultStatementTimeout, timeout*3/4)
	}
	if st >= timeout {
		return nil, broken("statement_timeout", "%s must be shorter than the tool's timeout %s, so the model hears why", st, timeout)
	}
	s := &sqlTool{name: d.Name, sb: sandbox{db: db, timeout: st, searchPath: chk.searchPath(), open: d.Open},
		chk: chk, notice: d.Notice}
	t := &Tool{Name: d.Name, Description: d.Description, Voice: d.Voice, Tier: TierNone,
		Plans: d.Plans, Timeout: d.Timeout, MaxTokens: d.MaxTokens, source: "sql", sandboxed: true}
	if d.Open {
		if d.Query != "" || len(d.Args) > 0 || d.Parameters != nil {
			return nil, broken("query", "an open tool takes its statement from the model; drop query, args and parameters")
		}
		t.Parameters = openSQLParams
		t.PrivateArguments = true
		t.Run = s.runOpen
		// Building the parser's instances costs about a second: pay it at
		// startup rather than on users' first questions.
		warmParser()
		return t, nil
	}
	if d.Parameters == nil {
		return nil, broken("parameters", "a JSON Schema is required (use {type: object} for none)")
	}
	if t.Parameters, err = json.Marshal(d.Parameters); err != nil {
		return nil, broken("parameters", "%v", err)
	}
	fixed := *chk
	fixed.schemaNamed = true
	if err := fixed.check(d.Query); err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return nil, broken("query", "%s", te.Message)
		}
		return nil, broken("query", "%v", err)
	}
	n, err := placeholders(d.Query)
	if err != nil {
		return nil, broken("query", "%v", err)
	}
	if n != len(d.Args) {
		return nil, broken("args", "the query has %d placeholders and args names %d", n, len(d.Args))
	}
	props, _ := d.Parameters["properties"].(map[string]any)
	for _, a := range d.Args {
		if _, ok := props[a]; !ok {
			return nil, broken("args", "%q is not a property of parameters", a)
		}
	}
	s.query, s.args = d.Query, d.Args
	t.Run = s.runFixed
	return t, nil
}

// placeholders returns the highest $n in a fixed query.
func placeholders(q string) (int, error) {
	tree, err := parseSQL(q)
	if err != nil {
		return 0, err
	}
	high := 0
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if p, ok := m.Interface().(*pganalyze.ParamRef); ok {
			high = max(high, int(p.Number))
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.Kind() != protoreflect.MessageKind {
				return true
			}
			if fd.IsList() {
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			} else {
				walk(v.Message())
			}
			return true
		})
	}
	walk(tree.ProtoReflect())
	return high, nil
}

// sqlTool is a SQL tool's body.
type sqlTool struct {
	name   string
	sb     sandbox
	chk    *sqlChecker
	notice string
	// A fixed tool's query and the parameters binding $1, $2, ...
	query string
	args  []string
}

// sqlAnswer is what the model and the app get: the rows, never the SQL.
type sqlAnswer struct {
	sqlRows
	Notice string `json:"notice,omitempty"`
}

func (s *sqlTool) runOpen(ctx context.Context, inv Invocation) (Outcome, error) {
	var a struct {
		SQL string `json:"sql"`
	}
	if err := inv.Decode(&a); err != nil {
		return Outcome{}, err
	}
	if err := s.chk.check(a.SQL); err != nil {
		inv.metrics.countSQL(s.name, sqlOutcomeRefused)
		return Outcome{}, err
	}
	return s.run(ctx, inv, a.SQL, nil)
}

func (s *sqlTool) runFixed(ctx context.Context, inv Invocation) (Outcome, error) {
	var a map[string]any
	if err := decodeNumbers(inv.Args, &a); err != nil {
		return Outcome{}, err
	}
	args := make([]any, len(s.args))
	for i, name := range s.args {
		args[i] = bindValue(a[name])
	}
	return s.run(ctx, inv, s.query, args)
}

func (s *sqlTool) run(ctx context.Context, inv Invocation, stmt string, args []any) (Outcome, error) {
	rows, err := s.sb.query(ctx, inv.UserID, stmt, args)
	if err != nil {
		var te *ToolError
		switch {
		case errors.As(err, &te) && te.Code == "query_timeout":
			inv.metrics.countSQL(s.name, sqlOutcomeTimeout)
		case errors.As(err, &te):
			inv.metrics.countSQL(s.name, sqlOutcomeRefusedDB)
		default:
			inv.metrics.countSQL(s.name, sqlOutcomeError)
		}
		return Outcome{}, err
	}
	inv.metrics.countSQL(s.name, sqlOutcomeRows)
	return Outcome{Data: sqlAnswer{sqlRows: rows, Notice: s.notice}}, nil
}

// decodeNumbers unmarshals keeping numbers exact.
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return Failf("invalid_arguments", "The arguments could not be read.")
	}
	return nil
}

// bindValue turns an argument into a query parameter: numbers as their
// text, which PostgreSQL reads as the placeholder's type; objects and
// arrays as JSON text.
func bindValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool:
		return x
	case json.Number:
		return x.String()
	case []any:
		if slices.ContainsFunc(x, func(e any) bool { _, ok := e.(string); return !ok }) {
			b, _ := json.Marshal(x)
			return string(b)
		}
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = e.(string)
		}
		return out
	}
	b, _ := json.Marshal(v)
	return string(b)
}
