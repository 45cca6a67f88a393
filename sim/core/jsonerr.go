package core

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// JSONError maps an encoding/json error to the API's error: a type mismatch
// names the parameter, anything else is unparseable JSON.
func JSONError(err error, prefix string) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || (te.Field == "" && prefix == "") {
		return ErrInvalidJSON()
	}
	param := te.Field
	switch {
	case prefix == "":
	case param == "":
		param = prefix
	default:
		param = prefix + "." + param
	}
	got := te.Value
	if strings.HasPrefix(got, "number") {
		got = "number"
	}
	return ErrInvalidType(param, goKindName(te.Type), article(got))
}

func goKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Name() == "RawMessage" {
			return "a JSON value"
		}
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	}
	return "a " + t.Kind().String()
}

func article(kind string) string {
	switch kind {
	case "array", "object", "integer":
		return "an " + kind
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// JSONKind names the JSON type of a raw value for error messages.
func JSONKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
