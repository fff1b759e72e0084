package tools

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// ErrDuplicateKey is wrapped by the DecodeArgs error for an object that
// names a key twice. encoding/json keeps the last value, so the model
// (or whoever reads the call later) could see one value and the tool act
// on another; strict decoding refuses the call instead.
var ErrDuplicateKey = errors.New("duplicate key")

// DecodeArgs decodes tool arguments into v (a pointer) as strictly as the
// tool schemas read: one JSON value with nothing after it, no key twice in
// any object at any depth (objects inside arrays included), no key that is
// not a property of the target struct (additionalProperties: false), and
// property names matched exactly, not case-insensitively as encoding/json
// would. Empty input or null leaves v as it is. Every built-in tool and
// every tool made with New decode through it. On error v may be partly
// filled; discard it.
func DecodeArgs(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON object")
	}
	// The value is valid JSON of the right shape; now check what
	// encoding/json lets through silently. Every error below is a
	// duplicate or a misspelt key, never a syntax error.
	s := keyScanner{dec: json.NewDecoder(bytes.NewReader(raw))}
	return s.value(reflect.TypeOf(v), "")
}

// keyScanner walks the token stream of a value already decoded once,
// following the Go type it was decoded into so it knows which objects are
// structs (exact, case-sensitive property names) and which are maps or
// untyped (any key, each once).
type keyScanner struct {
	dec *json.Decoder
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// value checks the next value in the stream; t is the Go type it decodes
// into (nil when unknown or opaque) and at its JSON path ("" for the
// arguments object itself).
func (s *keyScanner) value(t reflect.Type, at string) error {
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	t = concrete(t)
	switch tok {
	case json.Delim('{'):
		return s.object(t, at)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; s.dec.More(); i++ {
			if err := s.value(elem, at+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, err = s.dec.Token() // ']'
		return err
	}
	return nil
}

// object checks the members of an object whose '{' was just read.
func (s *keyScanner) object(t reflect.Type, at string) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t != nil && t.Kind() == reflect.Struct:
		fields = map[string]reflect.Type{}
		structFields(t, fields, 0)
	case t != nil && t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("%w %q in %s (give each key once)", ErrDuplicateKey, key, where(at))
		}
		seen[key] = true
		child := elem
		if fields != nil {
			ft, ok := fields[key]
			if !ok {
				// encoding/json bound it to a field whose name differs in
				// case (or by Unicode folding: "ſkill" is "skill" to it).
				if name := foldMatch(fields, key); name != "" {
					return fmt.Errorf("unknown key %q in %s; property names are case-sensitive, use %q", key, where(at), name)
				}
				return fmt.Errorf("unknown key %q in %s; send only the properties the schema lists", key, where(at))
			}
			child = ft
		}
		if err := s.value(child, join(at, key)); err != nil {
			return err
		}
	}
	_, err := s.dec.Token() // '}'
	return err
}

// concrete strips pointers and returns nil for types that decode
// themselves, whose objects are then checked for duplicates only.
func concrete(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
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

// structFields adds the JSON property names of struct t to fields, as
// encoding/json names them: the tag name or the Go name, embedded structs
// without a tag promoted. Ambiguous promoted names, which encoding/json
// drops, never reach here: the first decode refused them as unknown.
func structFields(t reflect.Type, fields map[string]reflect.Type, depth int) {
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
			if et.Kind() == reflect.Struct && depth < 16 {
				structFields(et, fields, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := fields[name]; !ok || depth == 0 {
			fields[name] = ft
		}
	}
}

// foldMatch returns the property name encoding/json matched key to.
func foldMatch(fields map[string]reflect.Type, key string) string {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return name
		}
	}
	return ""
}

// where names a JSON path for a message.
func where(at string) string {
	if at == "" {
		return "the arguments"
	}
	return at
}

// join appends an object key to a JSON path: a dotted name when it is a
// plain identifier, a quoted index otherwise.
func join(at, key string) string {
	plain := key != ""
	for i, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return at + "[" + strconv.Quote(key) + "]"
	case at == "":
		return key
	}
	return at + "." + key
}
