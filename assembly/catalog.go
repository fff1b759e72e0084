package assembly

import (
	"fmt"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// CatalogStateKey is the session state key holding the digest of the
// catalog last published to agent. It is not a temp: key, so turn resets
// leave it alone.
func CatalogStateKey(agent string) string { return "skillkit:catalog_digest:" + agent }

// Catalog formats.
const (
	FormatReminder = "reminder"
	FormatList     = "list"
)

// CatalogOptions configures catalog publication. A nil *CatalogOptions
// means the reminder format with the default description cap.
type CatalogOptions struct {
	// Format is FormatReminder (the default) or FormatList.
	Format string
	// DescriptionMaxLength caps descriptions (0: the catalog default).
	DescriptionMaxLength int
}

// CatalogEvent returns the context event that publishes the agent's
// catalog, or nil when the catalog the agent last saw is still current.
// The first publication renders the catalog; a later change appends a full
// replacement (or a tombstone when no skill is left) instead of editing
// the earlier message, so the prompt cache survives. The catalog is empty
// — and nothing is sent — when the agent does not expose the tool the
// catalog tells the model to call (the skill tool for the reminder format,
// the skill or skill_load tool for the list format).
func CatalogEvent(sess *session.Session, agent string, snap *registry.Snapshot, toolset []tools.Tool, opts *CatalogOptions) (*session.Event, error) {
	var o CatalogOptions
	if opts != nil {
		o = *opts
	}
	var r, replacement catalog.Renderer
	switch o.Format {
	case "", FormatReminder:
		r, replacement = catalog.Reminder{}, catalog.Replacement{}
	case FormatList:
		r, replacement = catalog.List{}, catalog.ListReplacement{}
	default:
		return nil, fmt.Errorf("catalog format %q is not one of reminder, list", o.Format)
	}
	var c *catalog.Catalog
	if snap != nil && exposesCatalogTool(toolset, o.Format) {
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
	prev, published := sess.State[key]
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
	text := c.Render(use)
	return &session.Event{Kind: session.KindContext, Agent: agent, Text: text,
		StateDelta: map[string]*string{key: session.Ptr(digest)}}, nil
}

// catalogMemoKey keys the built catalog in a snapshot's memo.
type catalogMemoKey struct{ maxLength int }

func exposesCatalogTool(toolset []tools.Tool, format string) bool {
	for _, t := range toolset {
		if t.Name == tools.SkillName || (format == FormatList && t.Name == tools.LoadName) {
			return true
		}
	}
	return false
}
