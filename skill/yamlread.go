package skill

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeYAML parses YAML text into the root node of its first document
// (nil for an empty one) with go.yaml.in/yaml/v3, smoothing over the few
// places where that library reads YAML otherwise than YAML 1.2 and the
// reference validator's reader do:
//
//   - only CR and LF break lines: U+0085, U+2028 and U+2029 are
//     characters like any other (the library breaks lines there);
//   - a line of spaces and tabs only is an empty line (the library
//     rejects some of those tabs as indentation);
//   - a block scalar may start with a tab after its indentation, and a
//     key may be empty (": value"), both of which the library refuses:
//     such a text is parsed again with the indentation indicator written
//     out (|2) or the empty key quoted ("": value);
//   - the front matter is one document: text after the first is an
//     error, where the library would drop it without a word.
//
// checked is the text as the strict checks must read it: src with only
// those rewrites that change what the library parses (the indicator, the
// quoted key), line for line, so node positions point into it.
func decodeYAML(src string) (root *yaml.Node, checked string, err error) {
	text, restore := hideYAML11Breaks(src)
	parsed := strings.Split(blankTabs(text), "\n")
	written := strings.Split(src, "\n")
	var dec *yaml.Decoder
	var doc yaml.Node
	var first error
	for try := 0; ; try++ {
		dec = yaml.NewDecoder(strings.NewReader(strings.Join(parsed, "\n")))
		doc = yaml.Node{}
		err := dec.Decode(&doc)
		if err == nil {
			break
		}
		if errors.Is(err, io.EOF) {
			return nil, src, nil
		}
		if first == nil {
			first = err // a retry's error would speak of rewritten text
		}
		if try == maxYAMLRetries || !(indicateBlockIndent(parsed, written, err) || quoteEmptyKeys(parsed, written)) {
			return nil, src, first
		}
	}
	checked = strings.Join(written, "\n")
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		line := more.Line
		if m := yamlLineRE.FindStringSubmatch(fmt.Sprint(err)); m != nil {
			line, _ = strconv.Atoi(m[1])
			line++ // the parser's 0-based line, as parserErrorShift corrects it
		}
		return nil, checked, fmt.Errorf("yaml: line %d: more than one YAML document: text here is not part of the mapping above (indent every field alike, at the start of the line)", line)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, checked, nil
	}
	if restore != nil {
		restoreValues(doc.Content[0], restore, 0)
	}
	return doc.Content[0], checked, nil
}

// maxYAMLRetries bounds how often decodeYAML parses one text again.
const maxYAMLRetries = 16

// blankTabs turns the tabs of lines holding nothing but spaces and tabs
// into spaces, one for one: YAML reads such a line as an empty line (or,
// in a block scalar, as white space of the same length).
func blankTabs(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.IndexByte(l, '\t') >= 0 && strings.Trim(l, " \t") == "" {
			lines[i] = strings.Repeat(" ", len(l))
		}
	}
	return strings.Join(lines, "\n")
}

// yaml11Breaks are the line breaks of YAML 1.1 that YAML 1.2 reads as
// characters.
var yaml11Breaks = [...]rune{'\u0085', '\u2028', '\u2029'}

// hideYAML11Breaks replaces each YAML 1.1 line break in src by a private
// character absent from src, one for one, so that line and column
// numbers stay; restore puts them back into a parsed value. restore is
// nil when src has none.
func hideYAML11Breaks(src string) (string, *strings.Replacer) {
	if !strings.ContainsAny(src, string(yaml11Breaks[:])) {
		return src, nil
	}
	var hide, show []string
	next := rune(0x10FFFD) // plane 16, private use: printable to YAML
	for _, r := range yaml11Breaks {
		for strings.ContainsRune(src, next) {
			next--
		}
		hide = append(hide, string(r), string(next))
		show = append(show, string(next), string(r))
		next--
	}
	return strings.NewReplacer(hide...).Replace(src), strings.NewReplacer(show...)
}

// restoreValues applies restore to the values of n and the nodes below.
func restoreValues(n *yaml.Node, restore *strings.Replacer, depth int) {
	if depth > maxStrictDepth {
		return
	}
	n.Value = restore.Replace(n.Value)
	n.Anchor = restore.Replace(n.Anchor)
	for _, c := range n.Content {
		restoreValues(c, restore, depth+1)
	}
}

// indicateBlockIndent handles a block scalar whose first content line
// starts with a tab after its indentation ("  \tcode"): YAML takes the
// spaces as the indentation and the tab as content, where the library
// refuses to guess. When err is that refusal, it writes the indentation
// into the scalar's header, in both parsed and written (the same lines,
// as the library reads them and as written), as an indentation indicator
// (|2). Only that line's columns after the indicator move.
func indicateBlockIndent(parsed, written []string, err error) bool {
	msg := err.Error()
	if !strings.Contains(msg, "found a tab character where an indentation space is expected") {
		return false
	}
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	if n < 1 || n >= len(parsed) {
		return false
	}
	header := parsed[n-1]
	at := blockIndicator(header)
	if at < 0 {
		return false
	}
	// The collection holding the scalar is indented as far as the key
	// (or the sequence entry) it belongs to.
	lead := len(header) - len(strings.TrimLeft(header, " "))
	parent := lead
	for rest := header[parent:]; strings.HasPrefix(rest, "- ") && parent+2 < at; rest = header[parent:] {
		parent += 2 + len(rest[2:]) - len(strings.TrimLeft(rest[2:], " "))
	}
	if parent >= at {
		parent = lead
	}
	for _, l := range parsed[n:] {
		t := strings.TrimLeft(l, " ")
		if t == "" {
			continue
		}
		indent := len(l) - len(t) - parent
		if indent < 1 || indent > 9 {
			return false
		}
		for _, lines := range [][]string{parsed, written} {
			h := lines[n-1]
			if i := blockIndicator(h); i >= 0 {
				lines[n-1] = h[:i+1] + strconv.Itoa(indent) + h[i+1:]
			}
		}
		return true
	}
	return false
}

// blockIndicator returns the byte index of a block scalar's | or > in a
// header line: after a space (or at the start), followed by chomping
// indicators and then the end, a space or a comment. -1 when there is
// none, or an indentation indicator is already given.
func blockIndicator(line string) int {
	for i := 0; i < len(line); i++ {
		if c := line[i]; (c == '|' || c == '>') && (i == 0 || line[i-1] == ' ') {
			rest := strings.TrimLeft(line[i+1:], "+-")
			if rest == "" || rest[0] == ' ' || rest[0] == '#' {
				return i
			}
		}
	}
	return -1
}

// quoteEmptyKeys quotes the empty keys of lines that start (after their
// indentation and sequence entries) with ": " or end in a lone ":", in
// both parsed and written, and reports whether it changed a line.
func quoteEmptyKeys(parsed, written []string) bool {
	changed := false
	for i, l := range parsed {
		at := emptyKey(l)
		if at < 0 {
			continue
		}
		parsed[i] = l[:at] + `""` + l[at:]
		if j := emptyKey(written[i]); j >= 0 {
			written[i] = written[i][:j] + `""` + written[i][j:]
		}
		changed = true
	}
	return changed
}

// emptyKey returns the byte index of the ':' of an empty key at the
// start of line, or -1.
func emptyKey(line string) int {
	i := len(line) - len(strings.TrimLeft(line, " "))
	for strings.HasPrefix(line[i:], "- ") {
		i += 2
		i += len(line[i:]) - len(strings.TrimLeft(line[i:], " "))
	}
	if rest := line[i:]; rest == ":" || strings.HasPrefix(rest, ": ") {
		return i
	}
	return -1
}
