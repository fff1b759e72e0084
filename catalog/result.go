package catalog

import (
	"errors"
	"fmt"
	"strings"
)

// ResourceKind says where a loaded skill's resources (scripts, references,
// assets) live, which decides the guidance the skill tool's result gives.
type ResourceKind string

// Resource kinds of the dsh skill tool. A SkillResult with no Resources has
// provider-managed resources.
const (
	ResourceDirectory ResourceKind = "directory"
	ResourceURL       ResourceKind = "url"
	ResourceOpaque    ResourceKind = "opaque"
)

// ResourceBase locates a skill's resources. Exactly the field that matches
// Kind is used; the JSON form is the skill tool's structured result
// ({"kind":"directory","path":...} and so on).
type ResourceBase struct {
	// Kind says how resources are located, and so which field below is
	// used.
	Kind ResourceKind `json:"kind"`
	// Path is the base directory, for ResourceDirectory.
	Path string `json:"path,omitempty"`
	// URL is the base URL, for ResourceURL.
	URL string `json:"url,omitempty"`
	// Description tells the model how to load resources, for
	// ResourceOpaque.
	Description string `json:"description,omitempty"`
}

// SkillResult is a successfully loaded skill as the skill tool returns it.
type SkillResult struct {
	// Name is the skill's name.
	Name string `json:"name"`
	// Provider names the source that supplied the skill.
	Provider string `json:"provider"`
	// Resources locates the skill's resources; nil means the provider
	// manages them.
	Resources *ResourceBase `json:"resourceBase,omitempty"`
	// Content is the skill's instruction body, rendered verbatim.
	Content string `json:"content"`
}

// ErrUnknownResourceKind reports a ResourceBase whose Kind is none of the
// ResourceKind constants.
var ErrUnknownResourceKind = errors.New("catalog: unknown resource kind")

// RenderSkillResult renders r as the dsh skill tool's "Skill result
// template":
//
//	<skill_content name="NAME">
//	<skill_resources>
//	RESOURCE GUIDANCE (two lines)
//	</skill_resources>
//
//	<skill_instructions>
//	BODY
//	</skill_instructions>
//	</skill_content>
//
// The name attribute is escaped with EscapeAttr; the path, URL, opaque
// description and provider name with EscapeText; the body is verbatim (it
// is the skill's own text). An unknown Resources.Kind is an error wrapping
// ErrUnknownResourceKind.
func RenderSkillResult(r SkillResult) (string, error) {
	guidance, err := resourceGuidance(r)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(r.Name) + len(guidance) + len(r.Content) + 160)
	b.WriteString(`<skill_content name="`)
	b.WriteString(EscapeAttr(r.Name))
	b.WriteString("\">\n<skill_resources>\n")
	b.WriteString(guidance)
	b.WriteString("\n</skill_resources>\n\n<skill_instructions>\n")
	b.WriteString(r.Content)
	b.WriteString("\n</skill_instructions>\n</skill_content>")
	return b.String(), nil
}

// Result error texts of the skill tool (the dsh skill tool's "Tool
// errors"). The
// checks run in this order: invalid name, unknown, not model-invocable,
// then whatever the provider raises.

// InvalidNameError is the result for a name that fails the name rule; raw
// is the argument exactly as the model sent it.
func InvalidNameError(raw string) string { return `Error: invalid skill name "` + raw + `"` }

// UnknownSkillError is the result for a valid name that no listed skill
// has, or whose provider returned nothing.
func UnknownSkillError(name string) string {
	return `Error: skill "` + name + `" is unknown or no longer available`
}

// NotModelInvocableError is the result for a listed skill whose
// disable-model-invocation flag is set; its body is never loaded.
func NotModelInvocableError(name string) string {
	return `Error: skill "` + name + `" is not available for model invocation`
}

// ProviderError is the result for any error a provider raises while
// loading a skill: its message behind "Error: ".
func ProviderError(err error) string { return "Error: " + err.Error() }

// resourceGuidance renders the two guidance lines for r.
func resourceGuidance(r SkillResult) (string, error) {
	if r.Resources == nil {
		return `Resources for this skill are managed by provider "` + EscapeText(r.Provider) + "\".\n" +
			"Load referenced resources only as needed.", nil
	}
	switch r.Resources.Kind {
	case ResourceDirectory:
		return "Base directory for this skill: " + EscapeText(r.Resources.Path) + "\n" +
			"Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.", nil
	case ResourceURL:
		return "Base URL for this skill: " + EscapeText(r.Resources.URL) + "\n" +
			"Resolve relative URLs mentioned by this skill against the base URL before using them. Load referenced resources only as needed.", nil
	case ResourceOpaque:
		return "Resources for this skill: " + EscapeText(r.Resources.Description) + "\n" +
			"Load referenced resources only as needed.", nil
	}
	return "", fmt.Errorf("%w %q in the resource base of skill %q: use %q, %q or %q, or leave Resources nil for provider-managed resources",
		ErrUnknownResourceKind, r.Resources.Kind, r.Name, ResourceDirectory, ResourceURL, ResourceOpaque)
}
