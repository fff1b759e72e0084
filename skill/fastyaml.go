package skill

import (
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// fastMaxKeys is the most top-level keys the fast path reads: its
// duplicate check is quadratic, and a hostile header of 100,000 keys took
// minutes through it.
const fastMaxKeys = 32

// fastFrontmatter parses the common shape of a SKILL.md header — flat
// "key: value" lines with plain, single- or double-quoted scalars that need
// no escapes — without the general YAML machinery, which costs far more
// than reading the file. It builds the same node tree yaml.v3 would build
// for that subset and reports ok=false for anything outside it (indented
// lines, block scalars, flow collections, anchors, escapes, values that
// YAML would resolve to numbers or null), so the full parser decides every
// case that is not plainly simple. FuzzFastFrontmatter checks that the two
// agree.
func fastFrontmatter(src string) (*yaml.Node, bool) { return new(fastNodes).build(src) }

// fastNodes holds the nodes of a header the fast reader built. All of
// them come from one backing array, which Parse takes from fastPool and
// puts back once it has read the header out of them: a header has a
// handful of lines, and discovery parses ten thousand headers.
type fastNodes struct {
	root    yaml.Node
	nodes   []yaml.Node
	content []*yaml.Node
}

// fastPool holds the fastNodes Parse reuses.
var fastPool = sync.Pool{New: func() any { return new(fastNodes) }}

// release drops what b refers to (the header text it was built from) and
// puts it back in fastPool.
func (b *fastNodes) release() {
	clear(b.nodes)
	clear(b.content)
	b.root = yaml.Node{}
	fastPool.Put(b)
}

// build is fastFrontmatter, building into b.
func (b *fastNodes) build(src string) (*yaml.Node, bool) {
	if !yamlPlainText(src) {
		return nil, false
	}
	// Two nodes a key, and never more keys than fastMaxKeys: a header of
	// many comment lines needs no more.
	n := min(2*strings.Count(src, "\n"), 2*fastMaxKeys) + 3
	if cap(b.nodes) < n {
		b.nodes, b.content = make([]yaml.Node, 0, n), make([]*yaml.Node, 0, n-1)
	}
	nodes := b.nodes[:0]
	b.root = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1, Content: b.content[:0]}
	root := &b.root
	defer func() { b.nodes, b.content = nodes, root.Content }()
	line := 0
	for len(src) > 0 {
		line++
		var l string
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			l, src = src[:i], src[i+1:]
		} else {
			l, src = src, ""
		}
		if l == "" || l[0] == '#' {
			continue
		}
		colon := strings.IndexByte(l, ':')
		if colon <= 0 || colon+1 >= len(l) || l[colon+1] != ' ' {
			return nil, false
		}
		key := l[:colon]
		for i := 0; i < len(key); i++ {
			c := key[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return nil, false
			}
		}
		if key[0] == '-' || len(key) > 128 {
			return nil, false
		}
		// Headers are a handful of keys; past that the full parser, whose
		// duplicate check is not quadratic, reads the document.
		if len(root.Content) >= 2*fastMaxKeys {
			return nil, false
		}
		for i := 0; i < len(root.Content); i += 2 {
			if root.Content[i].Value == key {
				return nil, false // duplicate keys: let the full parser decide
			}
		}
		raw := strings.TrimLeft(l[colon+2:], " ")
		val, tag, ok := fastScalar(raw)
		if !ok {
			return nil, false
		}
		style := yaml.Style(0)
		switch raw[0] {
		case '"':
			style = yaml.DoubleQuotedStyle
		case '\'':
			style = yaml.SingleQuotedStyle
		}
		if len(nodes)+2 > cap(nodes) {
			return nil, false // cannot happen: one pair per line at most
		}
		nodes = append(nodes,
			yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line, Column: 1},
			yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: val, Style: style, Line: line, Column: len(l) - len(raw) + 1})
		root.Content = append(root.Content, &nodes[len(nodes)-2], &nodes[len(nodes)-1])
	}
	if len(root.Content) == 0 {
		return nil, false
	}
	return root, true
}

// fastScalar reads one scalar value in the simple subset. Booleans are
// recognised in the spellings YAML 1.2's core schema resolves.
func fastScalar(raw string) (val, tag string, ok bool) {
	if raw == "" || strings.IndexByte(raw, '\t') >= 0 {
		return "", "", false
	}
	switch raw[0] {
	case '"':
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return "", "", false
		}
		in := raw[1 : len(raw)-1]
		if strings.ContainsAny(in, "\"\\") {
			return "", "", false
		}
		return in, "!!str", true
	case '\'':
		if len(raw) < 2 || raw[len(raw)-1] != '\'' {
			return "", "", false
		}
		in := raw[1 : len(raw)-1]
		if strings.IndexByte(in, '\'') >= 0 {
			return "", "", false
		}
		return in, "!!str", true
	}
	val = strings.TrimRight(raw, " ")
	switch val {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return val, "!!bool", true
	}
	c := val[0]
	if c >= '0' && c <= '9' || strings.IndexByte("-?:,[]{}#&*!|>'\"%@`+.~", c) >= 0 {
		return "", "", false
	}
	if strings.Contains(val, ": ") || strings.Contains(val, " #") || val[len(val)-1] == ':' || val == "<<" {
		return "", "", false // "<<" is YAML's merge key, even as a value
	}
	for _, special := range [...]string{"null", "nan", ".nan", "inf", ".inf"} {
		if strings.EqualFold(val, special) {
			return "", "", false
		}
	}
	return val, "!!str", true
}

// yamlPlainText reports whether src is valid UTF-8 made only of characters
// that YAML treats as ordinary printable text: no control characters and
// none of the Unicode line or byte-order marks that YAML 1.1 gives meaning.
func yamlPlainText(src string) bool {
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c < 0x80 {
			if c < 0x20 && c != '\n' || c == 0x7F {
				return false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError || r <= 0x9F || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r >= 0xFFFE && r <= 0xFFFF {
			return false
		}
		i += size - 1
	}
	return true
}
