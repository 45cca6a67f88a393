package httpx

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/voxgate/voxgate/internal/apierr"
)

// checkStrict holds body, which encoding/json has already accepted as one
// JSON value for a target of type t, to the rules encoding/json does not
// keep: nothing but white space after the value, no object with the same
// key twice (at any depth, inside free-form values too), and every key
// spelled exactly as its field's JSON name. encoding/json takes the last of
// two duplicates and matches names case-insensitively, so without this a
// body could say one thing to a reader and another to the gateway.
// allowUnknown lets keys that name no field through, but not one that
// encoding/json would fold onto a field.
func checkStrict(body []byte, end int64, t reflect.Type, allowUnknown bool) error {
	if len(bytes.TrimLeft(body[end:], " \t\r\n")) > 0 {
		return apierr.New(apierr.InvalidRequest, "The request body must hold one JSON value.")
	}
	dec := json.NewDecoder(bytes.NewReader(body[:end]))
	dec.UseNumber()
	return walk(dec, t, allowUnknown)
}

// walk reads one value from dec, checking the keys of every object in it
// against t (nil: any keys). encoding/json has bounded the nesting already.
func walk(dec *json.Decoder, t reflect.Type, allowUnknown bool) error {
	tok, err := dec.Token()
	if err != nil {
		return apierr.Wrap(apierr.InvalidRequest, "The request body is not valid JSON.", err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	t = typed(t)
	switch delim {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walk(dec, elem, allowUnknown); err != nil {
				return err
			}
		}
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = fieldsOf(t)
		}
		seen := make(map[string]struct{})
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return apierr.Wrap(apierr.InvalidRequest, "The request body is not valid JSON.", err)
			}
			key, _ := tok.(string)
			if _, dup := seen[key]; dup {
				return apierr.New(apierr.InvalidRequest, "The key "+quoteKey(key)+" appears twice in one object.")
			}
			seen[key] = struct{}{}
			var next reflect.Type
			switch {
			case fields != nil:
				ft, known := fields[key]
				if !known && (!allowUnknown || foldsOnto(key, fields)) {
					return apierr.New(apierr.InvalidRequest, "Unknown field "+quoteKey(key)+".")
				}
				next = ft
			case t != nil && t.Kind() == reflect.Map:
				next = t.Elem()
			}
			if err := walk(dec, next, allowUnknown); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return apierr.Wrap(apierr.InvalidRequest, "The request body is not valid JSON.", err)
	}
	return nil
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// typed is the type whose field names a value's keys must match: t without
// its pointers, or nil when the names are not known from t (an interface,
// or a type that decodes itself, such as json.RawMessage).
func typed(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Kind() == reflect.Interface || t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
			t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
			return nil
		}
		if t.Kind() != reflect.Pointer {
			return t
		}
		t = t.Elem()
	}
	return nil
}

// foldsOnto reports whether encoding/json would decode key into one of
// fields though it is not spelled as the field is.
func foldsOnto(key string, fields map[string]reflect.Type) bool {
	for name := range fields {
		if strings.EqualFold(key, name) {
			return true
		}
	}
	return false
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf maps the JSON names of struct t's fields, as encoding/json
// names them (tag name or Go name; "-" skipped; embedded structs'
// fields promoted, the shallower winning), to their types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := make(map[string]reflect.Type)
	depth := make(map[string]int)
	var collect func(t reflect.Type, d int)
	collect = func(t reflect.Type, d int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					collect(et, d+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if old, ok := depth[name]; !ok || d < old {
				m[name], depth[name] = ft, d
			}
		}
	}
	collect(t, 0)
	fieldCache.Store(t, m)
	return m
}

// quoteKey names a key in a message, cut short: it is the client's text.
func quoteKey(k string) string {
	if len(k) > 64 {
		k = strings.ToValidUTF8(k[:64], "") + "…"
	}
	return strconv.Quote(k)
}
