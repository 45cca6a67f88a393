package tools

import (
	"strings"

	pganalyze "github.com/pganalyze/pg_query_go/v6"
)

// The open-SQL checker's rules for names PostgreSQL resolves in its
// catalogs rather than in the declared views. A cast to regclass, regrole,
// regtype and their kin looks a name up in pg_class, pg_authid, pg_type...:
// the error or the value answers whether a table, a role or a type exists,
// though the reader may not select from the catalog itself. A composite
// type, a collation or a schema-qualified operator is resolved the same
// way. And the session's value functions (session_user, current_user,
// current_schema, ...) tell the model the gateway's login role and its
// layout. So casts may only name the plain types a question over one
// user's rows needs, and value functions only read the clock.

// sqlCastTypes are the types a cast may name, as the parser spells them
// (int is int4, double precision is float8, boolean is bool, ...), bare or
// in pg_catalog, and their arrays. Every reg* type, oid and the other
// system types, and every user-defined type, are refused.
var sqlCastTypes = setOf(`bool int2 int4 int8 numeric float4 float8 text varchar bpchar
	date time timetz timestamp timestamptz interval json jsonb uuid`)

// sqlCollations are the collations a COLLATE clause may name: the ones
// every database has, so naming one reveals nothing.
var sqlCollations = setOf(`C POSIX default ucs_basic`)

// sqlClockValues are the SQL value functions allowed: the date and time.
// CURRENT_USER, SESSION_USER, USER, CURRENT_ROLE, CURRENT_SCHEMA and
// CURRENT_CATALOG are refused.
var sqlClockValues = map[pganalyze.SQLValueFunctionOp]bool{
	pganalyze.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        true,
	pganalyze.SQLValueFunctionOp_SVFOP_CURRENT_TIME:        true,
	pganalyze.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:      true,
	pganalyze.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   true,
	pganalyze.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: true,
	pganalyze.SQLValueFunctionOp_SVFOP_LOCALTIME:           true,
	pganalyze.SQLValueFunctionOp_SVFOP_LOCALTIME_N:         true,
	pganalyze.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      true,
	pganalyze.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    true,
}

// sqlSessionFunctions may never be put on a tool's function list: each
// reads the session, the server or the catalogs rather than the rows
// (the value functions also have function spellings, current_user(),
// and PostgreSQL 16 adds system_user).
var sqlSessionFunctions = setOf(`current_user session_user user current_role system_user
	current_schema current_schemas current_database current_catalog current_setting set_config
	current_query inet_server_addr inet_server_port inet_client_addr inet_client_port version
	pg_backend_pid pg_postmaster_start_time pg_conf_load_time pg_current_logfile pg_my_temp_schema
	pg_typeof pg_get_userbyid pg_has_role row_security_active txid_current txid_current_if_assigned
	query_to_xml table_to_xml schema_to_xml database_to_xml`)

// sqlSessionPrefixes are families of such functions: to_regclass and its
// kin, the has_*_privilege checks, pg_* system functions, large objects,
// dblink.
var sqlSessionPrefixes = []string{"to_reg", "has_", "pg_", "lo_", "dblink"}

// sessionFunction reports whether name reads the session or the catalogs.
func sessionFunction(name string) bool {
	if sqlSessionFunctions[name] {
		return true
	}
	for _, p := range sqlSessionPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// catalogName is a parser name list ("pg_catalog", "int4") as its last
// part, and whether it is bare or in pg_catalog.
func catalogName(names []*pganalyze.Node) (string, bool) {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n.GetString_().GetSval())
	}
	switch {
	case len(parts) == 1:
		return parts[0], true
	case len(parts) == 2 && parts[0] == "pg_catalog":
		return parts[1], true
	}
	return strings.Join(parts, "."), false
}

func checkTypeName(t *pganalyze.TypeName) error {
	name, ok := catalogName(t.Names)
	if !ok || !sqlCastTypes[name] || t.Setof || t.PctType {
		return refused("the type %s is not allowed; cast to a plain type such as text, numeric, date or timestamptz", name)
	}
	return nil
}

func checkValueFunction(v *pganalyze.SQLValueFunction) error {
	if !sqlClockValues[v.Op] {
		return refused("%s is not allowed", strings.TrimPrefix(v.Op.String(), "SVFOP_"))
	}
	return nil
}

func checkCollation(c *pganalyze.CollateClause) error {
	if name, ok := catalogName(c.Collname); !ok || !sqlCollations[name] {
		return refused("the collation %s is not allowed", name)
	}
	return nil
}

// checkOperator refuses OPERATOR(schema.op) outside pg_catalog: the
// parser qualifies an operator only when the statement does.
func checkOperator(e *pganalyze.A_Expr) error {
	if len(e.Name) < 2 {
		return nil
	}
	if name, ok := catalogName(e.Name); !ok {
		return refused("the operator %s is not allowed", name)
	}
	return nil
}
