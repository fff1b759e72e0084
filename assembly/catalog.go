package assembly

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
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
	// Render, when set, writes the catalog section from the skills the
	// request sees (filters applied; ctx is the request's), in place of
	// the format's rendering. In the list format a text that does not
	// start with "Available skills:" gets that line in front. A blank
	// text publishes no catalog, as when no skill is visible. It changes
	// only the text: the skill tools and what they load stay the same.
	Render func(ctx context.Context, skills []skill.Summary) string
	// Guidance is the tooling guidance published after the catalog.
	Guidance Guidance
	// Budget keeps the catalog within a share of the model's context
	// window (see CatalogBudget); nil is the default budget: 8,000
	// characters, the model's window being unknown. Set ContextWindow to
	// the model's. It applies to the format's rendering, not to Render's
	// text.
	Budget *CatalogBudget
	// NoBudget publishes the whole catalog whatever its size.
	NoBudget bool
}

// Defaults of CatalogBudget.
const (
	// DefaultBudgetShare is the share of the context window a catalog
	// may take: what the best hosts give theirs.
	DefaultBudgetShare = 0.02
	// DefaultBudgetChars is the budget when the context window is not
	// known.
	DefaultBudgetChars = 8000
)

// CatalogBudget bounds the catalog: descriptions are shortened first,
// then the skills the agent used least recently are left out (those never
// used before those used, worst source rank and then the end of the name
// order first), and the catalog always ends with a line saying how many
// were left out and how to load them — never silently.
type CatalogBudget struct {
	// ContextWindow is the model's context window in tokens; 0 means
	// unknown, and the budget is MaxChars.
	ContextWindow int
	// Share is the part of ContextWindow the catalog may take, counted
	// in o200k_base tokens; 0 is DefaultBudgetShare.
	Share float64
	// MaxChars is the budget in characters when ContextWindow is 0; 0 is
	// DefaultBudgetChars.
	MaxChars int
}

// Validate checks the fields; a nil budget is valid.
func (b *CatalogBudget) Validate() error {
	if b == nil {
		return nil
	}
	_, err := b.budget()
	return err
}

// budget returns the catalog.Budget b describes.
func (b *CatalogBudget) budget() (catalog.Budget, error) {
	if b.ContextWindow < 0 || b.Share < 0 || b.Share > 1 || b.MaxChars < 0 {
		return catalog.Budget{}, fmt.Errorf("Budget: ContextWindow %d, Share %v, MaxChars %d: give a positive window (or 0 for unknown), a share between 0 and 1, a positive character count (or 0 for the defaults)",
			b.ContextWindow, b.Share, b.MaxChars)
	}
	if b.ContextWindow == 0 {
		return catalog.Budget{MaxChars: cmp.Or(b.MaxChars, DefaultBudgetChars)}, nil
	}
	tokens := int(float64(b.ContextWindow) * cmp.Or(b.Share, DefaultBudgetShare))
	return catalog.Budget{MaxTokens: max(tokens, 1)}, nil
}

// GuidanceMode chooses the tooling guidance published after a catalog.
type GuidanceMode int

const (
	// GuidanceDefault publishes, in the list format, a "Tooling and
	// workspace guidance:" section with one line per skill tool the agent
	// offers; the reminder format carries its own instructions and adds
	// none.
	GuidanceDefault GuidanceMode = iota
	// GuidanceReplace publishes Guidance.Text instead, in either format.
	GuidanceReplace
	// GuidanceNone publishes no guidance. Say in the system prompt which
	// skill tools the agent has, then.
	GuidanceNone
)

// Guidance configures the tooling guidance after the catalog.
type Guidance struct {
	// Mode chooses the guidance; the zero value is GuidanceDefault.
	Mode GuidanceMode
	// Text is the guidance GuidanceReplace publishes, as is.
	Text string
	// Exec, with GuidanceDefault, replaces the default line about
	// workspace_exec (when the agent offers it). It changes only the
	// prompt: workspace_exec stays offered.
	Exec string
}

// Validate reports the first unusable field, named from Guidance on.
func (g Guidance) Validate() error {
	switch {
	case g.Mode < GuidanceDefault || g.Mode > GuidanceNone:
		return fmt.Errorf("Guidance.Mode %d is not one of GuidanceDefault, GuidanceReplace, GuidanceNone", int(g.Mode))
	case g.Mode == GuidanceReplace && strings.TrimSpace(g.Text) == "":
		return errors.New("Guidance.Text is empty with GuidanceReplace; write the guidance, or use GuidanceNone for none")
	case g.Mode != GuidanceReplace && g.Text != "":
		return errors.New("Guidance.Text is set but Guidance.Mode is not GuidanceReplace; set the mode to publish it")
	case g.Mode != GuidanceDefault && g.Exec != "":
		return errors.New("Guidance.Exec is set but Guidance.Mode is not GuidanceDefault; it replaces a line of the default guidance only")
	}
	return nil
}

// GuidanceHeader opens the default tooling guidance.
const GuidanceHeader = "Tooling and workspace guidance:"

// companion formats the phrase for the companion tool shipped as name,
// under the name the agent offers it by, or "" when it does not.
func companion(named map[string]string, name, phrase string) string {
	if n, ok := named[name]; ok {
		return fmt.Sprintf(phrase, n)
	}
	return ""
}

// guidance returns the tooling guidance for the agent's tools, "" for
// none.
func (o *CatalogOptions) guidance(toolset []tools.Tool) string {
	switch o.Guidance.Mode {
	case GuidanceReplace:
		return o.Guidance.Text
	case GuidanceNone:
		return ""
	}
	if o.Format != FormatList {
		return ""
	}
	named := map[string]string{} // shipped name → name offered
	for _, t := range toolset {
		if b := t.Builtin(); b != "" {
			named[b] = t.Name
		}
	}
	var lines []string
	if n, ok := named[tools.LoadName]; ok {
		lines = append(lines, "- Call "+n+" with a skill's name to load its instructions before following them; they stay in the context while the skill is loaded.")
	} else if n, ok := named[tools.SkillName]; ok {
		lines = append(lines, "- Call "+n+" with a skill's name to read its instructions before following them.")
	}
	if n, ok := named[tools.ListDocsName]; ok {
		line := "- " + n + " lists the documents of a skill"
		if s, ok := named[tools.SelectDocsName]; ok {
			line += "; " + s + " adds the ones you need to the context"
		}
		lines = append(lines, line+".")
	} else if s, ok := named[tools.SelectDocsName]; ok {
		lines = append(lines, "- "+s+" adds a skill's documents to the context.")
	}
	if n, ok := named[tools.ReadName]; ok {
		lines = append(lines, "- "+n+" reads one file of a skill, such as a script to inspect before running it.")
	}
	if n, ok := named[tools.WorkspaceExecName]; ok {
		line := o.Guidance.Exec
		if line == "" {
			line = "- " + n + " runs a shell command in this session's workspace: a loaded skill's files are under skills/<name>/, write results to out/, and name the files to return with output globs."
		}
		lines = append(lines, line)
	}
	if r, ok := named[tools.WorkspaceExecReadName]; ok {
		lines = append(lines, "- A command that keeps running (a server, a watcher) starts with background: true and returns a handle; "+
			r+" reads its new output"+companion(named, tools.WorkspaceExecWriteName, ", %s writes to its input")+
			companion(named, tools.WorkspaceExecKillName, ", %s stops it")+".")
	}
	if len(lines) == 0 {
		return ""
	}
	return GuidanceHeader + "\n" + strings.Join(lines, "\n")
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
//
// With a custom Render or a tooling guidance the digest also covers the
// published text, so a change of either appends a replacement.
func CatalogEvent(ctx context.Context, state map[string]string, agent string, snap *registry.Snapshot, toolset []tools.Tool, opts *CatalogOptions) (*session.Event, error) {
	var o CatalogOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.NoBudget:
		o.Budget = nil
	case o.Budget == nil:
		o.Budget = &CatalogBudget{}
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
	if err := o.Guidance.Validate(); err != nil {
		return nil, fmt.Errorf("assembly: CatalogOptions.%w", err)
	}
	// The catalog's text before publication: the renderer's, or the
	// format's first rendering.
	custom, hasCustom := "", false
	if o.Render != nil {
		hasCustom = true
		if snap != nil && offersCatalogTool(toolset, o.Format) {
			custom = o.Render(ctx, snap.Summaries())
		}
		if strings.TrimSpace(custom) == "" {
			custom = ""
		} else if o.Format == FormatList && !strings.HasPrefix(custom, catalog.ListHeader) {
			custom = catalog.ListHeader + "\n" + custom
		}
	}
	empty := c.Empty() || hasCustom && custom == ""
	guide := ""
	if !empty {
		guide = o.guidance(toolset)
	}
	digest := c.Digest()
	if b := o.Budget; b != nil && *b != (CatalogBudget{}) {
		// A budget changes the text: a new one publishes it anew.
		digest += fmt.Sprintf("~%d/%g/%d", b.ContextWindow, b.Share, b.MaxChars)
	}
	if hasCustom || guide != "" {
		first := custom
		if !hasCustom {
			first = c.Render(r)
		}
		sum := sha256.Sum256([]byte(first + "\x00" + guide))
		digest += "+" + hex.EncodeToString(sum[:8])
	}
	key := CatalogStateKey(agent)
	prev, published := state[key]
	if published && prev == digest {
		return nil, nil
	}
	if !published && empty {
		return nil, nil
	}
	var text string
	switch {
	case empty:
		text = replacement.Render(catalog.Request{})
	case hasCustom && published && o.Format == FormatList:
		text = catalog.ListReplacementIntro + custom
	case hasCustom:
		text = custom
	default:
		// The catalog is not empty, so it came from snap's memo; so does
		// its text, guidance included: every session that publishes it
		// then holds one string, not its own copy (≈ 120 KB for 1,000
		// skills, which a server with many sessions would keep per
		// session).
		rr := r
		if published {
			rr = replacement
		}
		var budget catalog.Budget
		if o.Budget != nil {
			var err error
			if budget, err = o.Budget.budget(); err != nil {
				return nil, fmt.Errorf("assembly: CatalogOptions.%w", err)
			}
		}
		v, err := snap.Memo(catalogTextKey{o.DescriptionMaxLength, o.Format, published, guide, budget.MaxTokens, budget.MaxChars}, func() (any, error) {
			t := c.Render(rr)
			if o.Budget != nil {
				fit, err := c.Fit(rr, budget)
				if err != nil {
					return nil, err
				}
				if fit.Omitted > 0 {
					// Which skills stay depends on the agent's use:
					// fitted per session below.
					return fitted{}, nil
				}
				t = fit.Text
			}
			if guide != "" {
				t += "\n\n" + guide
			}
			return t, nil
		})
		if err != nil {
			return nil, err
		}
		if _, perSession := v.(fitted); perSession {
			if budget.Recent, err = loadstate.Used(state, agent); err != nil {
				return nil, err
			}
			fit := func() (any, error) {
				f, err := c.Fit(rr, budget)
				return f.Text, err
			}
			var t any
			if len(budget.Recent) == 0 {
				// An agent that used no skill yet sees what every such
				// agent does: fitted once per snapshot.
				t, err = snap.Memo(catalogFitKey{catalogTextKey{o.DescriptionMaxLength, o.Format, published, guide, budget.MaxTokens, budget.MaxChars}}, fit)
			} else {
				t, err = fit()
			}
			if err != nil {
				return nil, err
			}
			text = t.(string)
		} else {
			text, guide = v.(string), ""
		}
	}
	if guide != "" {
		text += "\n\n" + guide
	}
	return &session.Event{Kind: session.KindContext, Agent: agent, Text: text,
		StateDelta: map[string]*string{key: session.Ptr(digest)}}, nil
}

// catalogMemoKey keys the built catalog in a snapshot's memo.
type catalogMemoKey struct{ maxLength int }

// catalogTextKey keys a published catalog text in a snapshot's memo: the
// first publication or the replacement, with its guidance.
type catalogTextKey struct {
	maxLength   int
	format      CatalogFormat
	replacement bool
	guide       string
	// maxTokens and maxChars are the budget's (0 without one).
	maxTokens, maxChars int
}

// catalogFitKey keys the catalog fitted to its budget for agents that
// used no skill yet.
type catalogFitKey struct{ catalogTextKey }

// fitted is memoized in place of a text when the budget leaves skills
// out, which depends on each agent's use of them.
type fitted struct{}

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
