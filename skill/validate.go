package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// LowerFileName is the lower-case spelling of FileName that the reference
// validator also accepts. Discovery reads only FileName and warns about a
// folder holding only this one.
const LowerFileName = "skill.md"

// specFields are the only front-matter fields the Agent Skills
// specification allows; strict validation rejects any other.
var specFields = map[string]bool{
	FieldName: true, FieldDescription: true, FieldLicense: true,
	FieldCompatibility: true, FieldMetadata: true, FieldAllowedTools: true,
}

// Validate checks one skill folder strictly against the Agent Skills
// specification and returns the problems found, worded exactly as the
// reference validator (skills-ref) words them; nil means the skill is
// valid. fsys is rooted at the skill folder and dirName is that folder's
// name (the skill's name must equal it). It reads SKILL.md, or skill.md
// when there is no SKILL.md, and applies ValidateData.
func Validate(fsys fs.FS, dirName string) []string {
	data, err := fs.ReadFile(fsys, FileName)
	if errors.Is(err, fs.ErrNotExist) {
		// The reference validator also accepts a lower-case skill.md.
		data, err = fs.ReadFile(fsys, LowerFileName)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{"Missing required file: SKILL.md"}
		}
		return []string{fmt.Sprintf("Cannot read SKILL.md: %v", err)}
	}
	return ValidateData(data, dirName)
}

// ValidateData checks the content of one SKILL.md strictly, as Validate
// does; dirName is the name of the folder holding it ("" skips the
// name/folder check).
//
// It reads the file as the reference validator does, which differs from
// Parse (discovery) in three ways that Parse warns about: the front
// matter must start with "---" as the file's first bytes (a byte-order
// mark is not skipped) and ends at the next "---" anywhere, even inside a
// value; and it is strict YAML — no flow collections, anchors, aliases or
// tags, tabs only in quoted values, block scalars and comments, and every
// scalar is text (null and ~ included). Names and folder names are
// compared after NFKC normalisation. Strict mode follows the
// specification, so the skillkit invocation flags
// (disable-model-invocation, user-invocable) are reported as unexpected
// fields here even though Parse understands them.
//
// Where the reference validator fails without a message, ValidateData
// says why: a file over DefaultMaxFileSize or not valid UTF-8.
func ValidateData(data []byte, dirName string) []string {
	if len(data) > DefaultMaxFileSize {
		return []string{fmt.Sprintf("SKILL.md exceeds %d byte limit (%d bytes)", DefaultMaxFileSize, len(data))}
	}
	if !utf8.Valid(data) {
		return []string{"SKILL.md is not valid UTF-8"}
	}
	src, msg := splitStrict(universalNewlines(string(data)))
	if msg != "" {
		return []string{msg}
	}
	fields, msg := readStrict(src)
	if msg != "" {
		return []string{msg}
	}
	var errs []string
	var extra []string
	for _, k := range sortedKeys(fields) {
		if !specFields[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		errs = append(errs, fmt.Sprintf("Unexpected fields in frontmatter: %s. Only %s are allowed.", strings.Join(extra, ", "), allowedList))
	}
	if n, ok := fields[FieldName]; !ok {
		errs = append(errs, "Missing required field in frontmatter: name")
	} else {
		errs = append(errs, validateName(n, dirName)...)
	}
	if n, ok := fields[FieldDescription]; !ok {
		errs = append(errs, "Missing required field in frontmatter: description")
	} else {
		s, isStr := strictString(n)
		switch {
		case !isStr || trimPySpace(s) == "":
			errs = append(errs, "Field 'description' must be a non-empty string")
		case utf8.RuneCountInString(s) > MaxDescriptionLength:
			errs = append(errs, fmt.Sprintf("Description exceeds %d character limit (%d chars)", MaxDescriptionLength, utf8.RuneCountInString(s)))
		}
	}
	if n, ok := fields[FieldCompatibility]; ok {
		s, isStr := strictString(n)
		switch {
		case !isStr:
			errs = append(errs, "Field 'compatibility' must be a string")
		case utf8.RuneCountInString(s) > MaxCompatibilityLength:
			errs = append(errs, fmt.Sprintf("Compatibility exceeds %d character limit (%d chars)", MaxCompatibilityLength, utf8.RuneCountInString(s)))
		}
	}
	return errs
}

// ValidateNotes explains, as warnings naming file, where ValidateData
// reads a SKILL.md otherwise than its author (and Parse) may: a UTF-8
// byte-order mark, which it does not skip, and "---" inside the front
// matter, where it ends the front matter. Its messages stay those of the
// reference validator, which say neither; Parse reports the same
// warnings.
func ValidateNotes(data []byte, file string) []Diagnostic {
	var out []Diagnostic
	if d, ok := bomNote(data, file); ok {
		return append(out, d) // the front matter is not read at all
	}
	if sp, msg := splitDocument(normalizeText(data)); msg == "" {
		if d, ok := dashesNote(sp, file); ok {
			out = append(out, d)
		}
	}
	return out
}

// bomNote is the warning about a byte-order mark at the start of data.
func bomNote(data []byte, file string) (Diagnostic, bool) {
	if !bytes.HasPrefix(data, []byte(byteOrderMark)) {
		return Diagnostic{}, false
	}
	return Diagnostic{File: file, Line: 1, Severity: Warning, Message: fmt.Sprintf(
		"SKILL.md starts with a UTF-8 byte-order mark: discovery reads past it, but skillkit validate and the Agent Skills reference validator reject the file (%q); save it as UTF-8 without a byte-order mark", errNoFrontmatter)}, true
}

// dashesNote is the warning about "---" inside the front matter that
// sp holds.
func dashesNote(sp split, file string) (Diagnostic, bool) {
	i := strings.Index(sp.yaml, "---")
	if i < 0 {
		return Diagnostic{}, false
	}
	return Diagnostic{File: file, Line: sp.yamlLine + strings.Count(sp.yaml[:i], "\n"), Severity: Warning, Message: "\"---\" inside the front matter: " +
		"discovery reads on to the closing --- line, but skillkit validate and the Agent Skills reference validator end the front matter at the first \"---\" anywhere, " +
		"so they read this header only up to here; write it without three hyphens in a row (an em dash, say)"}, true
}

// universalNewlines turns CRLF and lone CR line endings into LF, as
// reading a file as text does; unlike normalizeText it keeps a
// byte-order mark.
func universalNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// splitStrict cuts text as the reference validator does: the file must
// start with "---", and the front matter is what lies between it and the
// next "---", wherever that is. msg is the validator's message when there
// is no such front matter.
func splitStrict(text string) (src, msg string) {
	if !strings.HasPrefix(text, "---") {
		return "", errNoFrontmatter
	}
	src, _, ok := strings.Cut(text[3:], "---")
	if !ok {
		return "", errNotClosed
	}
	return src, ""
}

// readStrict reads front-matter text (whose first line is line 1 of the
// file) as strict YAML and returns its top-level fields, merge keys
// applied, or the validator's message.
func readStrict(src string) (map[string]*yaml.Node, string) {
	root, checked, err := decodeYAML(src)
	if err != nil {
		return nil, "Invalid YAML in frontmatter: " + cleanYAMLError(err, 1)
	}
	if v := strictViolations(checked, root); len(v) > 0 {
		return nil, v[0].strictMessage(1)
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, errNotMapping
	}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Sprintf("Invalid YAML in frontmatter: line %d: mapping key is not a string; write each field as \"name: value\"", k.Line)
		}
		// The reference validator's reader drops what a merge key
		// brings into the top-level mapping: no field comes from one.
		if !isMergeKey(k) {
			fields[k.Value] = v
		}
	}
	return fields, ""
}

// strictString returns the text of a scalar: in strict YAML every scalar
// is text, so null, ~, yes and 123 are the strings they spell. A plain
// "<<" is YAML's merge key, which the reference validator's reader does
// not turn into text even as a value.
func strictString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!merge" {
		return "", false
	}
	return n.Value, true
}

func validateName(n *yaml.Node, dirName string) []string {
	raw, ok := strictString(n)
	if !ok || trimPySpace(raw) == "" {
		return []string{"Field 'name' must be a non-empty string"}
	}
	name := norm.NFKC.String(trimPySpace(raw))
	var errs []string
	if c := utf8.RuneCountInString(name); c > MaxNameLength {
		errs = append(errs, fmt.Sprintf("Skill name '%s' exceeds %d character limit (%d chars)", name, MaxNameLength, c))
	}
	if name != strings.ToLower(name) {
		errs = append(errs, fmt.Sprintf("Skill name '%s' must be lowercase", name))
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		errs = append(errs, "Skill name cannot start or end with a hyphen")
	}
	if strings.Contains(name, "--") {
		errs = append(errs, "Skill name cannot contain consecutive hyphens")
	}
	if !specChars(name) {
		errs = append(errs, fmt.Sprintf("Skill name '%s' contains invalid characters. Only letters, digits, and hyphens are allowed.", name))
	}
	if dirName != "" && norm.NFKC.String(dirName) != name {
		errs = append(errs, fmt.Sprintf("Directory name '%s' must match skill name '%s'", dirName, name))
	}
	return errs
}

// specChars reports whether name holds only letters, digits (in the
// Unicode sense) and hyphens.
func specChars(name string) bool {
	for _, r := range name {
		if r != '-' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return false
		}
	}
	return true
}

// specName reports whether name, trimmed and NFKC-normalised, is valid
// under the Agent Skills specification as Validate checks it: 1-64
// lowercase letters and digits of any script and single hyphens, not at
// either end. It is wider than ValidName, the skill tool's ASCII rule.
func specName(name string) bool {
	return name != "" && utf8.RuneCountInString(name) <= MaxNameLength && name == strings.ToLower(name) &&
		!strings.HasPrefix(name, "-") && !strings.HasSuffix(name, "-") && !strings.Contains(name, "--") && specChars(name)
}

// trimPySpace trims what the reference validator's language counts as
// white space: Go's unicode.IsSpace and the four information separators
// U+001C to U+001F.
func trimPySpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
}
