package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

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
// name (the skill's name must equal it).
//
// Strict mode follows the specification, so the skillkit invocation flags
// (disable-model-invocation, user-invocable) are reported as unexpected
// fields here even though discovery (Parse) understands them.
func Validate(fsys fs.FS, dirName string) []string {
	data, err := fs.ReadFile(fsys, FileName)
	if errors.Is(err, fs.ErrNotExist) {
		// The reference validator also accepts a lower-case skill.md.
		data, err = fs.ReadFile(fsys, "skill.md")
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{"Missing required file: SKILL.md"}
		}
		return []string{fmt.Sprintf("Cannot read SKILL.md: %v", err)}
	}
	if len(data) > DefaultMaxFileSize {
		return []string{fmt.Sprintf("SKILL.md exceeds %d byte limit (%d bytes)", DefaultMaxFileSize, len(data))}
	}
	if !utf8.Valid(data) {
		return []string{"SKILL.md is not valid UTF-8"}
	}
	sp, msg := splitDocument(normalizeText(data))
	if msg != "" {
		return []string{msg}
	}
	root, err := decodeFrontmatter(sp.yaml)
	if err != nil {
		return []string{"Invalid YAML in frontmatter: " + cleanYAMLError(err, sp.yamlLine)}
	}
	if root == nil || root.Kind != yaml.MappingNode {
		return []string{errNotMapping}
	}
	// The reference validator's YAML reader (strictyaml) rejects duplicate
	// and non-text keys, so strict mode does too.
	fields := map[string]*yaml.Node{}
	keyLine := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		line := sp.yamlLine + k.Line - 1
		if k.Kind != yaml.ScalarNode {
			return []string{fmt.Sprintf("Invalid YAML in frontmatter: line %d: mapping key is not a string", line)}
		}
		if first, dup := keyLine[k.Value]; dup {
			return []string{fmt.Sprintf("Invalid YAML in frontmatter: line %d: mapping key %q already defined at line %d", line, k.Value, first)}
		}
		keyLine[k.Value] = line
		fields[k.Value] = root.Content[i+1]
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
		case !isStr || strings.TrimSpace(s) == "":
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

// strictString returns the text of a scalar; like the reference
// validator's YAML reader, every scalar is text.
func strictString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.Tag == "!!null" {
		return "", true
	}
	return n.Value, true
}

func validateName(n *yaml.Node, dirName string) []string {
	raw, ok := strictString(n)
	if !ok || strings.TrimSpace(raw) == "" {
		return []string{"Field 'name' must be a non-empty string"}
	}
	name := strings.TrimSpace(raw)
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
	for _, r := range name {
		if r != '-' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			errs = append(errs, fmt.Sprintf("Skill name '%s' contains invalid characters. Only letters, digits, and hyphens are allowed.", name))
			break
		}
	}
	if dirName != "" && dirName != name {
		errs = append(errs, fmt.Sprintf("Directory name '%s' must match skill name '%s'", dirName, name))
	}
	return errs
}
