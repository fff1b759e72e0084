package skill

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// DefaultMaxFileSize is the default cap on the size of one SKILL.md.
const DefaultMaxFileSize = 1 << 20

// ParseOptions adjusts Parse. The zero value is ready to use.
type ParseOptions struct {
	// File names the SKILL.md in diagnostics (for example
	// "skills/pdf/SKILL.md"). Default "SKILL.md".
	File string
	// DirName is the name of the folder holding the SKILL.md. When set, a
	// front-matter name that differs from it draws a warning, and a missing
	// name falls back to it.
	DirName string
	// MaxSize caps the SKILL.md size in bytes. 0 means DefaultMaxFileSize;
	// a negative value is an error.
	MaxSize int64
}

// knownFields are the front-matter fields skillkit interprets; any other
// field is kept in Raw and draws a lenient-mode warning.
var knownFields = map[string]bool{
	FieldName: true, FieldDescription: true, FieldLicense: true,
	FieldCompatibility: true, FieldMetadata: true, FieldAllowedTools: true,
	FieldDisableModelInvocation: true, FieldUserInvocable: true,
}

// split is the result of cutting a SKILL.md into front matter and body.
type split struct {
	yaml      string // front-matter text, LF line endings
	yamlLine  int    // file line of the first front-matter line
	body      string
	bodyLine  int
	closeLine int
}

var (
	errNoFrontmatter = "SKILL.md must start with YAML frontmatter (---)"
	errNotClosed     = "SKILL.md frontmatter not properly closed with ---"
	errNotMapping    = "SKILL.md frontmatter must be a YAML mapping"
)

// byteOrderMark is the UTF-8 encoding of U+FEFF.
const byteOrderMark = "\xEF\xBB\xBF"

// normalizeText strips a UTF-8 byte-order mark and turns CRLF and lone CR
// line endings into LF, so offsets and line numbers are stable whatever
// editor wrote the file.
func normalizeText(data []byte) string {
	data = bytes.TrimPrefix(data, []byte(byteOrderMark))
	if bytes.IndexByte(data, '\r') < 0 {
		return string(data)
	}
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// isFence reports whether line is a front-matter delimiter: exactly "---",
// optionally followed by spaces or tabs.
func isFence(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// splitDocument cuts text into front matter and body. msg is non-empty when
// the file has no usable front matter.
func splitDocument(text string) (s split, msg string) {
	first, rest, ok := strings.Cut(text, "\n")
	if !isFence(first) {
		return s, errNoFrontmatter
	}
	if !ok {
		return s, errNotClosed
	}
	line := 2
	off := 0
	for off <= len(rest) {
		end := strings.IndexByte(rest[off:], '\n')
		var cur string
		if end < 0 {
			cur = rest[off:]
		} else {
			cur = rest[off : off+end]
		}
		if isFence(cur) {
			s.yaml = rest[:off]
			s.yamlLine = 2
			s.closeLine = line
			if end < 0 {
				s.body = ""
			} else {
				s.body = rest[off+end+1:]
			}
			s.bodyLine = line + 1
			return s, ""
		}
		if end < 0 {
			break
		}
		off += end + 1
		line++
	}
	return s, errNotClosed
}

// yamlLineRE finds the line number in a yaml.v3 error message.
var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlErrorLine maps the line reported by the YAML parser to a file line.
func yamlErrorLine(err error, yamlLine int) int {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return yamlLine
	}
	n, _ := strconv.Atoi(m[1])
	return yamlLine + n - 1 + parserErrorShift(msg)
}

// parserErrorShift corrects yaml.v3's line numbers: its scanner errors
// count lines from 1, but its parser errors ("did not find expected ...")
// report the 0-based line, one before the line at fault.
func parserErrorShift(msg string) int {
	if strings.Contains(msg, "did not find expected") {
		return 1
	}
	return 0
}

// cleanYAMLError drops the "yaml: " prefix and rebases "line N" onto file
// lines so messages point into SKILL.md, not into the front-matter block.
func cleanYAMLError(err error, yamlLine int) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	shift := parserErrorShift(msg)
	return yamlLineRE.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return "line " + strconv.Itoa(yamlLine+n-1+shift)
	})
}

// unquotedColonRE matches a top-level "key: value" line whose plain value
// itself contains ": ", which YAML rejects but authors write all the time.
var unquotedColonRE = regexp.MustCompile(`^([ ]*[A-Za-z0-9_][A-Za-z0-9_.-]*):[ \t]+(.*: .*)$`)

// quoteColonValues rewrites every top-level "key: a: b" line as
// `key: "a: b"`. It returns the new text and the 1-based front-matter lines
// it changed.
func quoteColonValues(src string) (string, []int) {
	lines := strings.Split(src, "\n")
	var changed []int
	for i, l := range lines {
		m := unquotedColonRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v := strings.TrimRight(m[2], " \t")
		switch v[0] {
		case '"', '\'', '[', '{', '|', '>', '&', '*', '!', '#':
			continue
		}
		lines[i] = m[1] + ": " + strconv.Quote(v)
		changed = append(changed, i+1)
	}
	return strings.Join(lines, "\n"), changed
}

// decodeFrontmatter parses front-matter text into its top-level mapping
// node. fast reports that the fast reader parsed it: such a header holds
// nothing strict YAML rejects. Otherwise checked is the text the strict
// checks read (see decodeYAML). On failure it returns the YAML error.
func decodeFrontmatter(src string, buf *fastNodes) (root *yaml.Node, checked string, fast bool, err error) {
	if n, ok := buf.build(src); ok {
		return n, src, true, nil
	}
	root, checked, err = decodeYAML(src)
	return root, checked, false, err
}

// Parse reads one SKILL.md leniently, the way discovery loads skills: it
// keeps whatever can be understood and reports the rest as warnings. It
// returns a *LoadError (wrapping ErrInvalid) only when the file cannot be
// used at all: no front matter, YAML that stays invalid after the
// "key: a: b" retry, a header that is not a mapping, no usable name, or no
// description.
func Parse(data []byte, opts ParseOptions) (*Document, []Diagnostic, error) {
	file := opts.File
	if file == "" {
		file = FileName
	}
	limit := opts.MaxSize
	if limit < 0 {
		return nil, nil, fmt.Errorf("skill: ParseOptions.MaxSize is %d; use 0 for the default (%d bytes) or a positive size", limit, DefaultMaxFileSize)
	}
	if limit == 0 {
		limit = DefaultMaxFileSize
	}
	if int64(len(data)) > limit {
		return nil, nil, &LoadError{File: file, Err: ErrLimit, Message: fmt.Sprintf(
			"SKILL.md is %d bytes, over the %d-byte limit; move long material into reference files or raise the limit", len(data), limit)}
	}
	p := &parser{file: file}
	doc := p.parse(data, opts.DirName)
	// In file order, as a reader goes through the file; on one line, in
	// the order they were found.
	slices.SortStableFunc(p.diags, func(a, b Diagnostic) int { return a.Line - b.Line })
	if p.fatal != nil {
		return nil, p.diags, p.fatal
	}
	return doc, p.diags, nil
}

type parser struct {
	file     string
	yamlLine int // file line of the first front-matter line
	diags    []Diagnostic
	fatal    *LoadError
	raw      rawBuilder
}

// lineOf returns the file line of a front-matter node.
func (p *parser) lineOf(n *yaml.Node) int { return p.yamlLine + n.Line - 1 }

func (p *parser) warn(line int, field, format string, args ...any) {
	p.diags = append(p.diags, Diagnostic{File: p.file, Line: line, Field: field, Severity: Warning, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) fail(line int, field, format string, args ...any) {
	p.fatal = &LoadError{File: p.file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)}
}

func (p *parser) parse(data []byte, dirName string) *Document {
	if !utf8.Valid(data) {
		p.fail(0, "", "SKILL.md is not valid UTF-8; save it as UTF-8")
		return nil
	}
	if d, ok := bomNote(data, p.file); ok {
		p.diags = append(p.diags, d)
	}
	text := normalizeText(data)
	sp, msg := splitDocument(text)
	if msg != "" {
		p.fail(1, "", "%s", msg)
		return nil
	}
	if d, ok := dashesNote(sp, p.file); ok {
		p.diags = append(p.diags, d)
	}
	src := sp.yaml
	// The fast reader's nodes are read into the Document below and then
	// reused: nothing kept refers to them.
	buf := fastPool.Get().(*fastNodes)
	defer buf.release()
	root, checked, fast, err := decodeFrontmatter(src, buf)
	if err != nil {
		fixed, lines := quoteColonValues(src)
		if len(lines) == 0 {
			p.fail(yamlErrorLine(err, sp.yamlLine), "", "Invalid YAML in frontmatter: %s", cleanYAMLError(err, sp.yamlLine))
			return nil
		}
		root, checked, fast, err = decodeFrontmatter(fixed, buf)
		if err != nil {
			p.fail(yamlErrorLine(err, sp.yamlLine), "", "Invalid YAML in frontmatter: %s", cleanYAMLError(err, sp.yamlLine))
			return nil
		}
		for _, l := range lines {
			p.warn(sp.yamlLine+l-1, "", "value contains \": \" and is not quoted; read it as a string (quote it to silence this warning)")
		}
	}
	if !fast {
		warned := map[int]bool{}
		for _, v := range strictViolations(checked, root) {
			if v.kind == topDuplicate || warned[v.line] {
				continue // the field loop below warns about repeated fields; one warning a line is enough
			}
			warned[v.line] = true
			p.warn(sp.yamlLine+v.line-1, "", "%s", v.lenientMessage())
		}
	}
	if root == nil || root.Kind != yaml.MappingNode {
		line := sp.yamlLine
		if root != nil {
			line = sp.yamlLine + root.Line - 1
		}
		p.fail(line, "", "%s", errNotMapping)
		return nil
	}
	p.yamlLine = sp.yamlLine
	doc := &Document{Body: sp.body, BodyLine: sp.bodyLine}
	doc.UserInvocable = true
	doc.Raw = make(map[string]any, len(root.Content)/2)
	fileLine := func(n *yaml.Node) int { return sp.yamlLine + n.Line - 1 }
	var nameLine, descLine, dmiLine, uiLine int
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if k.Kind != yaml.ScalarNode {
			p.warn(fileLine(k), "", "front-matter key is not a plain string; ignored")
			continue
		}
		if seen[key] {
			p.warn(fileLine(k), key, "field %q appears more than once; the last value wins", key)
		} else {
			doc.Keys = append(doc.Keys, key)
		}
		seen[key] = true
		if rv, err := p.raw.value(v); err != nil {
			p.warn(fileLine(v), key, "field %q: %v; left out", key, err)
		} else {
			doc.Raw[key] = rv
		}
		line := fileLine(v)
		switch key {
		case FieldName:
			doc.Name, _ = p.scalar(v, key, line)
			nameLine = line
		case FieldDescription:
			doc.Description, _ = p.scalar(v, key, line)
			descLine = line
		case FieldLicense:
			doc.License, _ = p.scalar(v, key, line)
		case FieldCompatibility:
			doc.Compatibility, _ = p.scalar(v, key, line)
			if n := utf8.RuneCountInString(doc.Compatibility); n > MaxCompatibilityLength {
				p.warn(line, key, "compatibility is %d characters, over the %d-character limit of the Agent Skills spec", n, MaxCompatibilityLength)
			}
		case FieldMetadata:
			doc.Metadata = p.metadata(v, line)
		case FieldAllowedTools:
			doc.AllowedTools = p.allowedTools(v, line)
		case FieldDisableModelInvocation:
			if b, ok := p.boolean(v, key, line); ok {
				doc.DisableModelInvocation = b
				dmiLine = line
			}
		case FieldUserInvocable:
			if b, ok := p.boolean(v, key, line); ok {
				doc.UserInvocable = b
				uiLine = line
			}
		default:
			p.warn(fileLine(k), key, "unknown front-matter field %q (kept, but not interpreted); the spec allows %s", key, allowedList)
		}
	}
	p.checkName(doc, dirName, nameLine, sp.yamlLine)
	if p.fatal != nil {
		return nil
	}
	if trimPySpace(doc.Description) == "" {
		line := descLine
		if line == 0 {
			line = sp.yamlLine
		}
		p.fail(line, FieldDescription, "missing or empty description; add a description saying what the skill does and when to use it")
		return nil
	}
	if n := utf8.RuneCountInString(doc.Description); n > MaxDescriptionLength {
		p.warn(descLine, FieldDescription, "description is %d characters, over the %d-character limit of the Agent Skills spec", n, MaxDescriptionLength)
	}
	if doc.DisableModelInvocation && !doc.UserInvocable {
		p.warn(max(dmiLine, uiLine), "", "disable-model-invocation: true and user-invocable: false together leave nobody able to invoke the skill (not the model, not a user); drop one of them")
	}
	return doc
}

// checkName applies the lenient name rules: fall back to the directory
// name when the field is missing, warn on a mismatch, and reject names the
// skill tool could never accept. Names and folder names are compared
// NFKC-normalised, as Validate compares them.
func (p *parser) checkName(doc *Document, dirName string, line, yamlLine int) {
	if line == 0 {
		line = yamlLine
	}
	dir := norm.NFKC.String(dirName)
	name := trimPySpace(doc.Name)
	if name == "" {
		if dir != "" && ValidName(dir) {
			p.warn(line, FieldName, "missing name; using the directory name %q (add `name: %s`)", dir, dir)
			doc.Name = dir
			return
		}
		p.fail(line, FieldName, "missing name; add `name:` with lowercase letters a-z, digits and single hyphens")
		return
	}
	if name != doc.Name {
		p.warn(line, FieldName, "name has surrounding spaces; trimmed")
	}
	if n := norm.NFKC.String(name); n != name {
		verb := "%q"
		if norm.NFC.String(name) == n {
			verb = "%+q" // they look alike: show the code points
		}
		p.warn(line, FieldName, "name "+verb+" is read as its NFKC normalisation "+verb+", as the Agent Skills reference validator reads names; write it so", name, n)
		name = n
	}
	doc.Name = name
	if !ValidName(name) {
		if specName(name) {
			hint := ""
			if s := asciiName(name); s != "" {
				hint = fmt.Sprintf(" (%q, say)", s)
			}
			p.fail(line, FieldName, "name %q is valid in the Agent Skills spec, which allows lowercase letters of any script, but the skill tool accepts only ASCII names (^[a-z0-9]+(?:-[a-z0-9]+)*$: a-z, 0-9 and single hyphens), so the skill is skipped; rename the skill and its folder%s", name, hint)
			return
		}
		p.fail(line, FieldName, "name %q is not a valid skill name: use 1-%d lowercase letters a-z, digits and single hyphens, not at the start or end", name, MaxNameLength)
		return
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		p.warn(line, FieldName, "name is %d characters, over the %d-character limit of the Agent Skills spec", n, MaxNameLength)
	}
	if dirName != "" && dir != name {
		p.warn(line, FieldName, "name %q does not match the directory name %q; the skill is known as %q", name, dirName, name)
	}
}

// asciiName suggests an ASCII spelling of a name: letters stripped of
// their accents, anything else outside a-z and 0-9 turned into hyphens.
// It returns "" when that leaves no valid name.
func asciiName(name string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(name)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r):
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	if !ValidName(s) || utf8.RuneCountInString(s) > MaxNameLength {
		return ""
	}
	return s
}

// scalar returns the text of a scalar node. YAML scalars of every type
// (numbers, booleans, null and ~) are taken as their literal text, as the
// reference validator's YAML reader does; an empty value is "".
func (p *parser) scalar(n *yaml.Node, field string, line int) (string, bool) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		p.warn(line, field, "field %q must be a string; ignored", field)
		return "", false
	}
	return n.Value, true
}

// boolean accepts YAML booleans and the strings true/false, yes/no,
// on/off and 1/0 in any case.
func (p *parser) boolean(n *yaml.Node, field string, line int) (bool, bool) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		if b, ok := ParseBool(n.Value); ok {
			return b, true
		}
	}
	p.warn(line, field, "field %q must be true or false; ignored (the default applies)", field)
	return false, false
}

// ParseBool reads the boolean forms front-matter flags accept: true/false,
// yes/no, on/off and 1/0, in any letter case.
func ParseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

func (p *parser) metadata(n *yaml.Node, line int) map[string]string {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.warn(line, FieldMetadata, "metadata must be a mapping of strings to strings; ignored")
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
			p.warn(p.lineOf(k), FieldMetadata, "metadata entry %q is not a string value; ignored", k.Value)
			continue
		}
		out[k.Value] = v.Value
	}
	return out
}

func (p *parser) allowedTools(n *yaml.Node, line int) []string {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return strings.Fields(n.Value)
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c := deref(c); c.Kind == yaml.ScalarNode {
				out = append(out, strings.Fields(c.Value)...)
				continue
			}
			p.warn(p.lineOf(c), FieldAllowedTools, "allowed-tools entry is not a string; ignored")
		}
		return out
	}
	p.warn(line, FieldAllowedTools, "allowed-tools must be a space-separated string; ignored")
	return nil
}

// allowedList is the reference validator's rendering of the allowed fields.
const allowedList = "['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']"

// maxAliasNodes bounds how many values alias expansion may add to Raw in
// one document. A YAML node tree can hold an alias to a collection that
// contains that alias (a cycle) or aliases nested so that their expansion
// grows exponentially ("billion laughs"); both would otherwise exhaust the
// stack or memory of whoever reads an untrusted SKILL.md.
const maxAliasNodes = 10000

// rawBuilder converts YAML nodes into the plain Go values of
// Frontmatter.Raw, guarding alias expansion.
type rawBuilder struct {
	active   map[*yaml.Node]bool // alias targets being expanded
	expanded int                 // values produced inside aliases
}

// value converts n into plain Go values that encode to JSON unchanged:
// mappings become map[string]any (keys as text), sequences []any, scalars
// their typed value. Values JSON cannot hold (infinities, NaN, binary,
// timestamps) keep their source text.
func (b *rawBuilder) value(n *yaml.Node) (any, error) {
	return b.walk(n, 0)
}

func (b *rawBuilder) walk(n *yaml.Node, aliasDepth int) (any, error) {
	if aliasDepth > 0 {
		b.expanded++
		if b.expanded > maxAliasNodes {
			return nil, fmt.Errorf("aliases expand to more than %d values", maxAliasNodes)
		}
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		if b.active[n.Alias] {
			return nil, fmt.Errorf("alias *%s refers to a value that contains it", n.Value)
		}
		if b.active == nil {
			b.active = make(map[*yaml.Node]bool)
		}
		b.active[n.Alias] = true
		v, err := b.walk(n.Alias, aliasDepth+1)
		delete(b.active, n.Alias)
		return v, err
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := b.walk(n.Content[i+1], aliasDepth)
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := b.walk(c, aliasDepth)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		return scalarValue(n), nil
	}
	return nil, nil
}

// scalarValue returns the typed value of a scalar node.
func scalarValue(n *yaml.Node) any {
	switch n.Tag {
	case "!!str":
		return n.Value
	case "!!bool":
		if b, ok := ParseBool(n.Value); ok {
			return b
		}
		return n.Value
	case "!!binary":
		return n.Value
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	switch t := v.(type) {
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return n.Value // JSON has no infinities or NaN
		}
		return t
	case int, int64, uint64, bool, string, nil:
		return t
	default:
		// Timestamps and other exotic tags keep their source text so
		// they round-trip exactly.
		return n.Value
	}
}

// deref returns the node an alias stands for (aliases never point at
// aliases, so one step suffices).
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// sortedKeys returns the keys of m in byte order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
