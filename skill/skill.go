// Package skill parses and validates Agent Skills: a folder with a SKILL.md
// (YAML front matter followed by Markdown instructions) plus any scripts,
// references and assets beside it.
//
// Parse reads one SKILL.md in lenient mode (what discovery uses: load whatever
// can be understood and report the rest as warnings); Validate applies the
// Agent Skills specification strictly, with the reference validator's
// messages. ReadManifest lists the files that belong to a skill.
package skill

import ()

// FileName is the name of the file that makes a folder a skill.
const FileName = "SKILL.md"

// Front-matter field names defined by the Agent Skills specification and by
// the skill tool's invocation flags.
const (
	FieldName                   = "name"
	FieldDescription            = "description"
	FieldLicense                = "license"
	FieldCompatibility          = "compatibility"
	FieldMetadata               = "metadata"
	FieldAllowedTools           = "allowed-tools"
	FieldDisableModelInvocation = "disable-model-invocation"
	FieldUserInvocable          = "user-invocable"
)

// Specification limits, counted in Unicode code points as the reference
// validator does.
const (
	MaxNameLength          = 64
	MaxDescriptionLength   = 1024
	MaxCompatibilityLength = 500
)

// ValidName reports whether name satisfies the skill tool's name rule,
// ^[a-z0-9]+(?:-[a-z0-9]+)*$. The specification's 64-character limit is a
// separate check (a warning when loading, an error in Validate), so an
// over-long but well-formed name still loads and can be invoked.
func ValidName(name string) bool {
	// Hand-written rather than a regular expression: discovery and the
	// catalog check every name, and this is an order of magnitude faster.
	// FuzzValidNameRE keeps it in agreement with the expression.
	if name == "" || name[0] == '-' || name[len(name)-1] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if name[i-1] == '-' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Frontmatter is the typed view of a SKILL.md header. Fields that the
// specification does not define are kept unchanged in Extra, so servers can
// republish the header exactly (the MCP skills extension needs every field).
type Frontmatter struct {
	// Name is the name field: the skill's identifier.
	Name string
	// Description is the description field: what the skill does and when
	// to use it.
	Description string
	// License is the license field, as written.
	License string
	// Compatibility is the compatibility field: the environment the skill
	// needs.
	Compatibility string
	// Metadata is the string → string map of the spec; non-string scalar
	// values are converted to their YAML text.
	Metadata map[string]string
	// AllowedTools is the space-separated allowed-tools field, split.
	AllowedTools []string
	// DisableModelInvocation hides the skill from the catalog and the model;
	// a user can still invoke it directly. Default false.
	DisableModelInvocation bool
	// UserInvocable says whether a user may invoke the skill directly.
	// Default true.
	UserInvocable bool
	// Raw holds every front-matter field as decoded from YAML (including the
	// ones above), in a form that encodes back to JSON or YAML unchanged.
	Raw map[string]any
	// Keys lists the front-matter keys in the order they appear in the file.
	Keys []string
}

// ModelInvocable reports whether the model may see and load the skill.
func (f *Frontmatter) ModelInvocable() bool { return !f.DisableModelInvocation }

// Document is a parsed SKILL.md.
type Document struct {
	Frontmatter
	// Body is the Markdown after the closing "---" line, with a leading
	// newline removed, line endings normalised to "\n".
	Body string
	// BodyLine is the 1-based line of the file where Body starts.
	BodyLine int
}

// Summary is the cheap, immutable description of one skill that discovery
// produces and that catalogs, listings and visibility filters work on. It
// holds no body and no document contents.
type Summary struct {
	// Name is the skill's name from its front matter (or, when the front
	// matter has none that can be used, its directory name).
	Name string
	// Description is the description from the skill's front matter.
	Description string
	// ModelInvocable is false when disable-model-invocation is true.
	ModelInvocable bool
	// UserInvocable is false when user-invocable is false.
	UserInvocable bool
	// Source is the label of the source the skill came from.
	Source string
	// Rank is the source's rank; lower ranks win same-name conflicts.
	Rank int
	// Dir is the skill's folder, slash-separated, relative to the root of
	// its source's file system ("." when the source is the skill itself).
	Dir string
	// Path is the skill's folder as the operator knows it (an absolute host
	// path for directory sources; empty when the source has none).
	Path string
}
