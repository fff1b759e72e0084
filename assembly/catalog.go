package assembly

import (
	"fmt"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// CatalogStateKey is the session state key holding the digest of the
// catalog last published to agent. It is not a temp: key, so load resets
// leave it alone.
func CatalogStateKey(agent string) string { return "skillkit:catalog_digest:" + agent }

// CatalogFormat is how the catalog is rendered. The zero value is
// FormatReminder.
type CatalogFormat int

const (
	// FormatReminder is the <system-reminder> block that tells the model
	// to call the skill tool. The default.
	FormatReminder CatalogFormat = iota
	// FormatList is the "Available skills:" list for agents that load
	// skills with skill_load.
	FormatList
)

// String returns the format's name: "reminder" or "list".
func (f CatalogFormat) String() string {
	switch f {
	case FormatReminder:
		return "reminder"
	case FormatList:
		return "list"
	}
	return fmt.Sprintf("CatalogFormat(%d)", int(f))
}

// ParseCatalogFormat reads a format name; anything else is an error
// naming the value.
func ParseCatalogFormat(s string) (CatalogFormat, error) {
	for _, f := range []CatalogFormat{FormatReminder, FormatList} {
		if s == f.String() {
			return f, nil
		}
	}
	return 0, fmt.Errorf("catalog format %q is not one of reminder, list", s)
}

// MarshalText encodes the format by name.
func (f CatalogFormat) MarshalText() ([]byte, error) {
	if f != FormatReminder && f != FormatList {
		return nil, fmt.Errorf("catalog format %d is not one of FormatReminder, FormatList", int(f))
	}
	return []byte(f.String()), nil
}

// UnmarshalText decodes a format name (see ParseCatalogFormat).
func (f *CatalogFormat) UnmarshalText(b []byte) error {
	v, err := ParseCatalogFormat(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// CatalogOptions configures catalog publication. A nil *CatalogOptions
// means the reminder format with the default description cap.
type CatalogOptions struct {
	// Format is the rendering.
	Format CatalogFormat
	// DescriptionMaxLength caps descriptions (0: the catalog default).
	DescriptionMaxLength int
}

// CatalogEvent returns the context event that publishes the agent's
// catalog, or nil when the catalog the agent last saw (recorded in state)
// is still current. The first publication renders the catalog; a later
// change appends a full replacement (or a tombstone when no skill is left)
// instead of editing the earlier message, so the prompt cache survives.
// The catalog is empty — and nothing is sent — when the agent does not
// offer the shipped tool the catalog tells the model to call (the skill
// tool for the reminder format, the skill or skill_load tool for the list
// format); a user tool that only has its name does not count.
func CatalogEvent(state map[string]string, agent string, snap *registry.Snapshot, toolset []tools.Tool, opts *CatalogOptions) (*session.Event, error) {
	var o CatalogOptions
	if opts != nil {
		o = *opts
	}
	var r, replacement catalog.Renderer
	switch o.Format {
	case FormatReminder:
		r, replacement = catalog.Reminder{}, catalog.Replacement{}
	case FormatList:
		r, replacement = catalog.List{}, catalog.ListReplacement{}
	default:
		return nil, fmt.Errorf("assembly: CatalogOptions.Format %d is not one of FormatReminder, FormatList", int(o.Format))
	}
	var c *catalog.Catalog
	if snap != nil && offersCatalogTool(toolset, o.Format) {
		// Built once per snapshot: the description pipeline over every
		// skill costs far more than rendering.
		v, err := snap.Memo(catalogMemoKey{o.DescriptionMaxLength}, func() (any, error) {
			return catalog.New(snap.Summaries(), &catalog.Options{DescriptionMaxLength: o.DescriptionMaxLength})
		})
		if err != nil {
			return nil, err
		}
		c = v.(*catalog.Catalog)
	} else {
		var err error
		if c, err = catalog.New(nil, &catalog.Options{DescriptionMaxLength: o.DescriptionMaxLength}); err != nil {
			return nil, err
		}
	}
	digest := c.Digest()
	key := CatalogStateKey(agent)
	prev, published := state[key]
	if published && prev == digest {
		return nil, nil
	}
	if !published && c.Empty() {
		return nil, nil
	}
	use := r
	if published {
		use = replacement
	}
	return &session.Event{Kind: session.KindContext, Agent: agent, Text: c.Render(use),
		StateDelta: map[string]*string{key: session.Ptr(digest)}}, nil
}

// catalogMemoKey keys the built catalog in a snapshot's memo.
type catalogMemoKey struct{ maxLength int }

// offersCatalogTool reports whether the tool set holds, under its own
// name, the shipped tool the catalog names.
func offersCatalogTool(toolset []tools.Tool, f CatalogFormat) bool {
	for _, t := range toolset {
		shipped := t.Builtin() != "" && t.Builtin() == t.Name
		if shipped && (t.Name == tools.SkillName || f == FormatList && t.Name == tools.LoadName) {
			return true
		}
	}
	return false
}
