package tools

import (
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	pganalyze "github.com/pganalyze/pg_query_go/v6"
	pgquery "github.com/wasilibs/go-pgquery"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The open-SQL checker (DESIGN §8): a statement written by a model is parsed
// with PostgreSQL's own parser (libpg_query, built to WebAssembly, so the
// binary stays static) and allowed only as one SELECT whose every node is
// of a kind on nodeKinds, whose every relation is a declared view (or a
// CTE in scope) and whose every function is on the allowlist. Anything
// else is refused before it reaches the database. The sandbox (role, READ
// ONLY, row-level security) holds on its own; this is the first wall.

const (
	// MaxOpenSQLBytes caps a model's statement; a question over one user's
	// rows never needs more.
	MaxOpenSQLBytes = 8 << 10
	// maxSQLDepth bounds how deeply the parse tree may nest.
	maxSQLDepth = 120
)

// parseSlots bounds concurrent parses. Each concurrent parse needs a parser
// instance of its own, and building one compiles the WebAssembly module
// again (about a second of CPU); instances are kept for reuse. Parsing is
// CPU-bound, so more at once than cores gains nothing, and with the bound
// every instance there will ever be is built by warmParser at startup.
//
// The bound and warmOnce are the process's, not a tool's or a registry's,
// because what they guard is: the library keeps its parser instances in
// one pool per process, and its runtime's first use must happen alone. A
// bound per tool would let instances multiply with the open SQL tools, and
// two first uses race.
var parseSlots = make(chan struct{}, min(runtime.GOMAXPROCS(0), 4))

var warmOnce sync.Once

// warmParser builds every parser instance up front, so no user's question
// waits for a compile.
func warmParser() {
	warmOnce.Do(func() {
		// The first instance alone: wazero caches its own version in a
		// global on first use without a lock, and two runtimes built at
		// once race on it (the race detector fails the build's tests).
		// Then as many at once as may ever run: one reuses the first
		// instance, the others build the rest.
		_, _ = parseSQL("SELECT 1")
		var wg sync.WaitGroup
		for range cap(parseSlots) {
			wg.Go(func() { _, _ = parseSQL("SELECT 1") })
		}
		wg.Wait()
	})
}

func parseSQL(sql string) (*pganalyze.ParseResult, error) {
	parseSlots <- struct{}{}
	defer func() { <-parseSlots }()
	return pgquery.Parse(sql)
}

// identRE is a plain lower-case SQL identifier.
var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// nodeKinds are the parse-tree nodes a read over views is made of. Every
// other kind (INSERT, COPY, SET, FOR UPDATE, SELECT INTO, TABLESAMPLE, XML
// and JSON constructors, ...) is refused.
var nodeKinds = func() map[protoreflect.Name]bool {
	m := map[protoreflect.Name]bool{}
	for _, k := range strings.Fields(`Node List SelectStmt ResTarget ColumnRef String Integer Float Boolean
		BitString A_Const A_Expr BoolExpr FuncCall TypeCast TypeName SortBy RangeVar RangeSubselect
		RangeFunction JoinExpr SubLink CaseExpr CaseWhen CoalesceExpr MinMaxExpr NullTest BooleanTest
		WithClause CommonTableExpr Alias A_Star A_Indirection A_Indices A_ArrayExpr RowExpr
		SQLValueFunction WindowDef GroupingSet ParamRef CollateClause NamedArgExpr`) {
		m[protoreflect.Name(k)] = true
	}
	return m
}()

// DefaultSQLFunctions are the functions an open SQL tool allows unless it
// lists its own: aggregates, window functions, arithmetic, dates and text.
// Nothing here reads outside the query, sleeps, sets, locks or touches
// files.
var DefaultSQLFunctions = strings.Fields(`count sum avg min max stddev stddev_pop stddev_samp variance
	var_pop var_samp bool_and bool_or every string_agg array_agg percentile_cont percentile_disc mode
	corr regr_slope regr_intercept
	row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
	abs round trunc floor ceil ceiling sign sqrt power exp ln log mod greatest least div
	now date_trunc date_part extract age make_date make_interval make_timestamp make_timestamptz
	to_char to_date to_timestamp to_number justify_days justify_hours justify_interval date_bin
	timezone isfinite overlaps
	lower upper initcap length char_length btrim ltrim rtrim substring substr position strpos
	split_part replace concat concat_ws left right lpad rpad format reverse starts_with
	generate_series unnest array_length cardinality coalesce nullif
	jsonb_extract_path_text json_extract_path_text jsonb_array_length`)

// sqlChecker is one open SQL tool's allowlists.
type sqlChecker struct {
	// views by "schema.name" and by bare name, lower case.
	qualified map[string]bool
	bare      map[string]bool
	funcs     map[string]bool
	// schemaNamed refuses a bare view name: a fixed query is prepared as
	// the gateway, outside the sandbox's search_path.
	schemaNamed bool
}

func newSQLChecker(views, funcs []string) (*sqlChecker, error) {
	c := &sqlChecker{qualified: map[string]bool{}, bare: map[string]bool{}, funcs: map[string]bool{}}
	for _, v := range views {
		schema, name, ok := strings.Cut(v, ".")
		if !ok || !identRE.MatchString(schema) || !identRE.MatchString(name) {
			return nil, broken("views", "%q must be schema.view in lower-case letters, digits and _", v)
		}
		if strings.HasPrefix(schema, "pg_") || schema == "information_schema" || strings.HasPrefix(name, "pg_") {
			return nil, broken("views", "%q is a system name", v)
		}
		c.qualified[v] = true
		c.bare[name] = true
	}
	if len(c.qualified) == 0 {
		return nil, broken("views", "at least one view is required")
	}
	for _, f := range funcs {
		if !identRE.MatchString(f) {
			return nil, broken("functions", "%q is not a function name", f)
		}
		if sessionFunction(f) {
			return nil, broken("functions", "%q reads the session or the catalogs, not the views' rows", f)
		}
		c.funcs[f] = true
	}
	return c, nil
}

// searchPath is the declared views' schemas, for unqualified names.
func (c *sqlChecker) searchPath() string {
	var schemas []string
	for v := range c.qualified {
		s, _, _ := strings.Cut(v, ".")
		if !slices.Contains(schemas, s) {
			schemas = append(schemas, s)
		}
	}
	slices.Sort(schemas)
	return strings.Join(schemas, ", ")
}

// refused is the ToolError the model reads for a statement it may not run.
func refused(format string, args ...any) *ToolError {
	return Failf("sql_refused", "The query was refused: %s. Write one SELECT over the listed views.", fmt.Sprintf(format, args...))
}

// check parses sql and walks it. It never panics: a parser failure of
// any kind is a refusal.
func (c *sqlChecker) check(sql string) (err error) {
	if len(sql) > MaxOpenSQLBytes {
		return refused("it is longer than %d bytes", MaxOpenSQLBytes)
	}
	if strings.TrimSpace(sql) == "" {
		return refused("it is empty")
	}
	defer func() {
		if p := recover(); p != nil {
			err = refused("it could not be parsed")
		}
	}()
	tree, perr := parseSQL(sql)
	if perr != nil {
		return refused("it does not parse (%s)", parseProblem(perr))
	}
	if len(tree.Stmts) != 1 {
		return refused("it must be exactly one statement, not %d", len(tree.Stmts))
	}
	sel := tree.Stmts[0].GetStmt().GetSelectStmt()
	if sel == nil {
		return refused("%s is not allowed", kindName(tree.Stmts[0].GetStmt()))
	}
	return c.walkSelect(sel, nil, 1)
}

func parseProblem(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

// walkSelect checks a SELECT with the CTE names of enclosing WITHs in
// scope. A WITH's own names are in scope for its main query, for later
// CTEs, and (WITH RECURSIVE) for every CTE; a name out of scope is a real
// relation, so `WITH a AS (SELECT * FROM b), b AS (...)` reads the table b
// and is checked as such.
func (c *sqlChecker) walkSelect(s *pganalyze.SelectStmt, scope []string, depth int) error {
	if depth > maxSQLDepth {
		return refused("it is nested too deeply")
	}
	if len(s.LockingClause) > 0 {
		return refused("locking clauses (FOR UPDATE, FOR SHARE) are not allowed")
	}
	if s.IntoClause != nil {
		return refused("SELECT INTO is not allowed")
	}
	if w := s.WithClause; w != nil {
		inner := slices.Clone(scope)
		var names []string
		for _, n := range w.Ctes {
			if cte := n.GetCommonTableExpr(); cte != nil {
				names = append(names, cte.Ctename) // already folded by the parser
			}
		}
		for i, n := range w.Ctes {
			cte := n.GetCommonTableExpr()
			if cte == nil {
				return refused("%s is not allowed in WITH", kindName(n))
			}
			q := cte.Ctequery.GetSelectStmt()
			if q == nil {
				return refused("data-modifying statements (%s) are not allowed in WITH", kindName(cte.Ctequery))
			}
			visible := append(slices.Clone(scope), names[:i]...)
			if w.Recursive {
				visible = append(slices.Clone(scope), names...)
			}
			if err := c.walkSelect(q, visible, depth+1); err != nil {
				return err
			}
		}
		scope = append(inner, names...)
	}
	var err error
	s.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == "with_clause" {
			return true
		}
		err = c.walkField(fd, v, scope, depth+1)
		return err == nil
	})
	return err
}

func (c *sqlChecker) walkField(fd protoreflect.FieldDescriptor, v protoreflect.Value, scope []string, depth int) error {
	if fd.Kind() != protoreflect.MessageKind {
		return nil
	}
	if fd.IsList() {
		l := v.List()
		for i := 0; i < l.Len(); i++ {
			if err := c.walk(l.Get(i).Message(), scope, depth); err != nil {
				return err
			}
		}
		return nil
	}
	return c.walk(v.Message(), scope, depth)
}

func (c *sqlChecker) walk(m protoreflect.Message, scope []string, depth int) error {
	if depth > maxSQLDepth {
		return refused("it is nested too deeply")
	}
	name := m.Descriptor().Name()
	if !nodeKinds[name] {
		return refused("%s is not allowed", describeKind(string(name)))
	}
	switch n := m.Interface().(type) {
	case *pganalyze.SelectStmt:
		return c.walkSelect(n, scope, depth)
	case *pganalyze.RangeVar:
		if err := c.checkRelation(n, scope); err != nil {
			return err
		}
	case *pganalyze.FuncCall:
		if err := c.checkFunction(n); err != nil {
			return err
		}
	case *pganalyze.TypeName:
		if err := checkTypeName(n); err != nil {
			return err
		}
	case *pganalyze.SQLValueFunction:
		if err := checkValueFunction(n); err != nil {
			return err
		}
	case *pganalyze.CollateClause:
		if err := checkCollation(n); err != nil {
			return err
		}
	case *pganalyze.A_Expr:
		if err := checkOperator(n); err != nil {
			return err
		}
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		err = c.walkField(fd, v, scope, depth+1)
		return err == nil
	})
	return err
}

func (c *sqlChecker) checkRelation(r *pganalyze.RangeVar, scope []string) error {
	name := r.Relname
	switch {
	case r.Catalogname != "":
		return refused("%s.%s.%s is not one of the listed views", r.Catalogname, r.Schemaname, name)
	case r.Schemaname != "":
		if c.qualified[r.Schemaname+"."+name] {
			return nil
		}
		return refused("%s.%s is not one of the listed views", r.Schemaname, name)
	case slices.Contains(scope, name):
		return nil
	case c.bare[name] && c.schemaNamed:
		return refused("name the view with its schema (schema.%s) in a fixed query", name)
	case c.bare[name]:
		return nil
	}
	return refused("%s is not one of the listed views", name)
}

func (c *sqlChecker) checkFunction(f *pganalyze.FuncCall) error {
	parts := make([]string, 0, len(f.Funcname))
	for _, n := range f.Funcname {
		parts = append(parts, n.GetString_().GetSval())
	}
	name := strings.Join(parts, ".")
	switch {
	case len(parts) == 1 && c.funcs[parts[0]]:
		return nil
	case len(parts) == 2 && parts[0] == "pg_catalog" && c.funcs[parts[1]]:
		return nil
	}
	return refused("the function %s is not on the allowed list", name)
}

// kindName names a statement node for a refusal: "INSERT", "COPY".
func kindName(n *pganalyze.Node) string {
	if n == nil || n.GetNode() == nil {
		return "an empty statement"
	}
	m := n.ProtoReflect()
	od := m.Descriptor().Oneofs().ByName("node")
	fd := m.WhichOneof(od)
	if fd == nil {
		return "an empty statement"
	}
	return describeKind(string(fd.Message().Name()))
}

var kindWords = map[string]string{
	"InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE",
	"CopyStmt": "COPY", "VariableSetStmt": "SET", "LockingClause": "a locking clause",
	"IntoClause": "SELECT INTO", "TransactionStmt": "a transaction command", "ExplainStmt": "EXPLAIN",
	"RangeTableSample": "TABLESAMPLE", "DoStmt": "DO", "CallStmt": "CALL",
}

func describeKind(k string) string {
	if w, ok := kindWords[k]; ok {
		return w
	}
	if s, ok := strings.CutSuffix(k, "Stmt"); ok {
		return "the statement " + strings.ToUpper(s)
	}
	return "the construct " + k
}
