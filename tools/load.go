package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
)

// Names of the progressive-disclosure tools.
const (
	LoadName       = "skill_load"
	SelectDocsName = "skill_select_docs"
	ListDocsName   = "skill_list_docs"
	ReadName       = "skill_read"
)

// LoadArgs are the arguments of skill_load.
type LoadArgs struct {
	Skill          string   `json:"skill" jsonschema:"The exact skill name from the available skills list."`
	Docs           []string `json:"docs,omitempty" jsonschema:"Documents of the skill to include, as listed by skill_list_docs. Replaces the current selection."`
	IncludeAllDocs bool     `json:"include_all_docs,omitempty" jsonschema:"Include every document of the skill. Cannot be combined with docs."`
}

// SelectDocsArgs are the arguments of skill_select_docs.
type SelectDocsArgs struct {
	Skill          string   `json:"skill" jsonschema:"The exact skill name."`
	Docs           []string `json:"docs,omitempty" jsonschema:"Documents to add or to make the whole selection, as listed by skill_list_docs."`
	IncludeAllDocs bool     `json:"include_all_docs,omitempty" jsonschema:"Select every document. Cannot be combined with docs."`
	Mode           string   `json:"mode,omitempty" jsonschema:"add keeps the selection and adds docs; replace (the default) makes docs the whole selection; clear empties it."`
}

// SkillArg is the single argument of skill_list_docs.
type SkillArg struct {
	Skill string `json:"skill" jsonschema:"The exact skill name."`
}

// ReadArgs are the arguments of skill_read.
type ReadArgs struct {
	Skill string `json:"skill" jsonschema:"The exact name of a loaded skill."`
	Path  string `json:"path" jsonschema:"A file of the skill, relative to its folder (for example references/api.md)."`
}

// Load returns skill_load: it marks a skill loaded for the calling agent
// and, with docs or include_all_docs, sets its document selection. The
// skill's instructions are read (and cached) before it is marked, so a
// skill whose SKILL.md can no longer be read fails here with
// "Error: <message>" instead of at request assembly. The result is the
// short stub "loaded: NAME"; request assembly puts the instructions and
// selected documents where the placement says.
func Load() Tool {
	return Tool{
		Name:        LoadName,
		Description: "Load a skill's SKILL.md instructions, and optionally some of its documents, into the conversation. Select only the documents you need; list them first with skill_list_docs.",
		InputSchema: schemaFor[LoadArgs](),
		Handler: func(ctx context.Context, c Call) Result {
			var a LoadArgs
			if r, ok := decode(LoadName, c.Args, &a); !ok {
				return r
			}
			if r, ok := checkSkill(c.Skills, a.Skill); !ok {
				return r
			}
			if a.IncludeAllDocs && len(a.Docs) > 0 {
				return Errorf("Error: pass either docs or include_all_docs to %s, not both", LoadName)
			}
			if _, err := c.Skills.Body(ctx, a.Skill); err != nil {
				if errors.Is(err, registry.ErrNotFound) {
					return Errorf("%s", catalog.UnknownSkillError(a.Skill))
				}
				return Errorf("%s", catalog.ProviderError(err))
			}
			eff := loadEffect(a)
			if !a.IncludeAllDocs && len(a.Docs) > 0 {
				docs, r, ok := checkDocs(ctx, c.Skills, a.Skill, a.Docs)
				if !ok {
					return r
				}
				eff.Docs = docs
			}
			return Result{Text: "loaded: " + a.Skill, Effects: []Effect{eff}}
		},
	}
}

// Modes of skill_select_docs.
const (
	ModeAdd     = "add"
	ModeReplace = "replace"
	ModeClear   = "clear"
)

// SelectDocs returns skill_select_docs: it changes a skill's document
// selection (add, replace or clear; an unrecognised mode means replace, as
// upstream does) and counts as a use of the skill for the loaded-skills
// cap. Selecting documents of a skill that is not loaded loads it. The
// schema lists the three modes; clear takes neither docs nor
// include_all_docs.
func SelectDocs() Tool {
	s := schemaFor[SelectDocsArgs]()
	s.Properties["mode"].Enum = []any{ModeAdd, ModeReplace, ModeClear}
	s.Properties["mode"].Default = json.RawMessage(`"` + ModeReplace + `"`)
	return Tool{
		Name:        SelectDocsName,
		Description: "Change which documents of a skill are in the conversation: mode add keeps the current selection and adds docs, replace (default) sets the whole selection, clear removes all. Pick several documents in one call.",
		InputSchema: s,
		Handler: func(ctx context.Context, c Call) Result {
			var a SelectDocsArgs
			if r, ok := decode(SelectDocsName, c.Args, &a); !ok {
				return r
			}
			if r, ok := checkSkill(c.Skills, a.Skill); !ok {
				return r
			}
			if a.IncludeAllDocs && len(a.Docs) > 0 {
				return Errorf("Error: pass either docs or include_all_docs to %s, not both", SelectDocsName)
			}
			eff := selectEffect(a)
			switch {
			case a.Mode == ModeClear:
				if a.IncludeAllDocs || len(a.Docs) > 0 {
					return Errorf("Error: mode %q of %s takes no docs or include_all_docs; to change the selection use mode %q or %q", ModeClear, SelectDocsName, ModeReplace, ModeAdd)
				}
				return Result{Text: "cleared documents of " + a.Skill, Effects: []Effect{eff}}
			case a.IncludeAllDocs:
				return Result{Text: "selected all documents of " + a.Skill, Effects: []Effect{eff}}
			}
			docs, r, ok := checkDocs(ctx, c.Skills, a.Skill, a.Docs)
			if !ok {
				return r
			}
			eff.Docs = docs
			list := "none"
			if len(docs) > 0 {
				list = strings.Join(docs, ", ")
			}
			return Result{Text: fmt.Sprintf("selected documents of %s (%s): %s", a.Skill, eff.DocsMode, list), Effects: []Effect{eff}}
		},
	}
}

// ListDocs returns skill_list_docs: the JSON array of a skill's document
// paths, in byte order.
func ListDocs() Tool {
	return Tool{
		Name:        ListDocsName,
		Description: "List the documents of a skill (paths relative to the skill folder) that skill_load and skill_select_docs accept.",
		InputSchema: schemaFor[SkillArg](),
		Handler: func(ctx context.Context, c Call) Result {
			var a SkillArg
			if r, ok := decode(ListDocsName, c.Args, &a); !ok {
				return r
			}
			if r, ok := checkSkill(c.Skills, a.Skill); !ok {
				return r
			}
			docs, err := c.Skills.Docs(ctx, a.Skill)
			if err != nil {
				return Errorf("Error: %v", err)
			}
			if docs == nil {
				docs = []string{}
			}
			out, err := json.Marshal(docs)
			if err != nil {
				return Errorf("Error: %v", err)
			}
			return Result{Text: string(out)}
		},
	}
}

// Read returns skill_read: one file of a loaded skill by its path relative
// to the skill folder. Paths outside the skill's manifest are refused,
// files over the read cap (registry Options.MaxReadBytes) fail, and binary
// files are described (MIME type and size) rather than dumped.
func Read() Tool {
	return Tool{
		Name:        ReadName,
		Description: "Read one file of a loaded skill by its path relative to the skill folder (a script, reference or asset it mentions). Binary files are described, not shown.",
		InputSchema: schemaFor[ReadArgs](),
		Handler: func(ctx context.Context, c Call) Result {
			var a ReadArgs
			if r, ok := decode(ReadName, c.Args, &a); !ok {
				return r
			}
			// A skill the user invoked directly is loaded even when it is
			// hidden from the model: its files may then be read too.
			loaded := c.State != nil && c.State.Loaded(a.Skill)
			if r, ok := checkSkill(c.Skills, a.Skill); !ok && !(loaded && skill.ValidName(a.Skill) && listed(c.Skills, a.Skill)) {
				return r
			}
			if !loaded {
				return Errorf("Error: skill %q is not loaded; call %s or %s first", a.Skill, SkillName, LoadName)
			}
			if a.Path == "" {
				return Errorf("Error: %s needs a path, relative to the folder of skill %q (for example references/api.md)", ReadName, a.Skill)
			}
			data, err := c.Skills.ReadFile(ctx, a.Skill, a.Path)
			if err != nil {
				switch {
				case errors.Is(err, registry.ErrNotFound):
					return Errorf("Error: %q is not a file of skill %q; paths are relative to the skill folder (see %s for documents)", a.Path, a.Skill, ListDocsName)
				case errors.Is(err, registry.ErrTooLarge):
					return Errorf("Error: %v; it cannot be read whole, process it with a command instead (workspace_exec, when available)", err)
				case errors.Is(err, registry.ErrStale):
					return Errorf("Error: %q of skill %q changed on disk while it was read (%v); call %s again to read the new version", a.Path, a.Skill, err, ReadName)
				}
				return Errorf("Error: %v", err)
			}
			if utf8.Valid(data) && !slices.Contains(data, 0) {
				return Result{Text: string(data)}
			}
			mt := mimetype.Detect(data)
			return Result{Text: fmt.Sprintf("%s is a binary file (%s, %d bytes); its content is not shown. Use it from a command (workspace_exec, when available).", a.Path, mt.String(), len(data))}
		},
	}
}

// checkSkill applies the skill tool's checks, in its order, to a skill
// argument.
func checkSkill(snap *registry.Snapshot, name string) (Result, bool) {
	if !skill.ValidName(name) {
		return Errorf("%s", catalog.InvalidNameError(name)), false
	}
	sum, ok := Lookup(snap, name)
	if !ok {
		return Errorf("%s", catalog.UnknownSkillError(name)), false
	}
	if !sum.ModelInvocable {
		return Errorf("%s", catalog.NotModelInvocableError(name)), false
	}
	return Result{}, true
}

// listed reports whether the snapshot holds the skill.
func listed(snap *registry.Snapshot, name string) bool {
	_, ok := Lookup(snap, name)
	return ok
}

// Lookup finds a skill in a possibly nil snapshot.
func Lookup(snap *registry.Snapshot, name string) (skill.Summary, bool) {
	if snap == nil {
		return skill.Summary{}, false
	}
	return snap.Lookup(name)
}

// checkDocs verifies that every requested document exists and returns the
// selection deduplicated and in byte order. Unknown names are an error
// that lists the valid ones.
func checkDocs(ctx context.Context, snap *registry.Snapshot, name string, want []string) ([]string, Result, bool) {
	valid, err := snap.Docs(ctx, name)
	if err != nil {
		return nil, Errorf("Error: %v", err), false
	}
	var unknown []string
	out := make([]string, 0, len(want))
	for _, d := range want {
		if _, found := slices.BinarySearch(valid, d); !found {
			unknown = append(unknown, strconv.Quote(d))
			continue
		}
		out = append(out, d)
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		unknown = slices.Compact(unknown)
		if len(valid) == 0 {
			return nil, Errorf("Error: skill %q has no documents; unknown: %s", name, strings.Join(unknown, ", ")), false
		}
		return nil, Errorf("Error: unknown documents for skill %q: %s. Valid documents: %s", name, strings.Join(unknown, ", "), strings.Join(valid, ", ")), false
	}
	slices.Sort(out)
	return slices.Compact(out), Result{}, true
}
