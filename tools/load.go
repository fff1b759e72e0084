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
	// Skill is the exact name of the skill to load.
	Skill string `json:"skill" jsonschema:"The exact skill name from the available skills list."`
	// Docs are documents of the skill to include; they replace the
	// current selection.
	Docs []string `json:"docs,omitempty" jsonschema:"Documents of the skill to include, as listed by skill_list_docs. Replaces the current selection."`
	// IncludeAllDocs includes every document of the skill; it excludes
	// Docs.
	IncludeAllDocs bool `json:"include_all_docs,omitempty" jsonschema:"Include every document of the skill. Cannot be combined with docs."`
}

// SelectDocsArgs are the arguments of skill_select_docs.
type SelectDocsArgs struct {
	// Skill is the exact name of the skill.
	Skill string `json:"skill" jsonschema:"The exact skill name."`
	// Docs are the documents to add, or to make the whole selection.
	Docs []string `json:"docs,omitempty" jsonschema:"Documents to add or to make the whole selection, as listed by skill_list_docs."`
	// IncludeAllDocs selects every document; it excludes Docs.
	IncludeAllDocs bool `json:"include_all_docs,omitempty" jsonschema:"Select every document. Cannot be combined with docs."`
	// Mode is "add", "replace" (the default) or "clear".
	Mode string `json:"mode,omitempty" jsonschema:"add keeps the selection and adds docs; replace (the default) makes docs the whole selection; clear empties it."`
}

// SkillArg is the single argument of skill_list_docs.
type SkillArg struct {
	// Skill is the exact name of the skill.
	Skill string `json:"skill" jsonschema:"The exact skill name."`
}

// ReadArgs are the arguments of skill_read.
type ReadArgs struct {
	// Skill is the exact name of a loaded skill.
	Skill string `json:"skill" jsonschema:"The exact name of a loaded skill."`
	// Path is the file to read, relative to the skill's folder.
	Path string `json:"path" jsonschema:"A file of the skill, relative to its folder (for example references/api.md)."`
}

// Load returns skill_load: it marks a skill loaded for the calling agent
// and, with docs or include_all_docs, sets its document selection. The
// skill's instructions are read (and cached) before it is marked, so a
// skill whose SKILL.md can no longer be read fails here with
// "Error: <message>" instead of when the next request is built. The
// result is the short stub "loaded: NAME"; the next request shows the
// instructions and selected documents where the placement says.
func Load() Tool {
	return builtin(LoadName,
		"Load a skill's SKILL.md instructions, and optionally some of its documents, into the conversation. Select only the documents you need; list them first with skill_list_docs.",
		schemaFor[LoadArgs](), runLoad)
}

func runLoad(ctx context.Context, c Call) (Result, error) {
	var a LoadArgs
	if r, ok := decode(LoadName, c.Args, &a); !ok {
		return r, nil
	}
	if r, ok := checkSkill(c.Skills, a.Skill); !ok {
		return r, nil
	}
	if a.IncludeAllDocs && len(a.Docs) > 0 {
		return Errorf("Error: pass either docs or include_all_docs to %s, not both", LoadName), nil
	}
	if _, err := c.Skills.Body(ctx, a.Skill); err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if errors.Is(err, registry.ErrNotFound) {
			return Errorf("%s", catalog.UnknownSkillError(a.Skill)), nil
		}
		return Errorf("%s", catalog.ProviderError(err)), staleOnly(err)
	}
	eff := loadEffect(a)
	if a.IncludeAllDocs || len(a.Docs) > 0 {
		docs, r, err := resolveDocs(ctx, c.Skills, a.Skill, a.Docs, a.IncludeAllDocs)
		if err != nil || r.IsError {
			return r, err
		}
		eff.Docs = docs
	}
	return Result{Text: "loaded: " + a.Skill, Effects: []Effect{eff}}, nil
}

// Modes of skill_select_docs.
const (
	ModeAdd     = "add"
	ModeReplace = "replace"
	ModeClear   = "clear"
)

// SelectDocs returns skill_select_docs: it changes a skill's document
// selection (mode add, replace — the default — or clear) and counts as a
// use of the skill for the loaded-skills cap. Selecting documents of a
// skill that is not loaded loads it. Any other mode is an error naming
// the three; clear takes neither docs nor include_all_docs.
func SelectDocs() Tool {
	s := schemaFor[SelectDocsArgs]()
	s.Properties["mode"].Enum = []any{ModeAdd, ModeReplace, ModeClear}
	s.Properties["mode"].Default = json.RawMessage(`"` + ModeReplace + `"`)
	return builtin(SelectDocsName,
		"Change which documents of a skill are in the conversation: mode add keeps the current selection and adds docs, replace (default) sets the whole selection, clear removes all. Pick several documents in one call.",
		s, runSelectDocs)
}

func runSelectDocs(ctx context.Context, c Call) (Result, error) {
	var a SelectDocsArgs
	if r, ok := decode(SelectDocsName, c.Args, &a); !ok {
		return r, nil
	}
	switch a.Mode {
	case "", ModeAdd, ModeReplace, ModeClear:
	default:
		return Errorf("Error: mode %q of %s is not one of %q, %q, %q; omit it for %q", a.Mode, SelectDocsName, ModeAdd, ModeReplace, ModeClear, ModeReplace), nil
	}
	if r, ok := checkSkill(c.Skills, a.Skill); !ok {
		return r, nil
	}
	if a.IncludeAllDocs && len(a.Docs) > 0 {
		return Errorf("Error: pass either docs or include_all_docs to %s, not both", SelectDocsName), nil
	}
	eff := selectEffect(a)
	if a.Mode == ModeClear {
		if a.IncludeAllDocs || len(a.Docs) > 0 {
			return Errorf("Error: mode %q of %s takes no docs or include_all_docs; to change the selection use mode %q or %q", ModeClear, SelectDocsName, ModeReplace, ModeAdd), nil
		}
		return Result{Text: "cleared documents of " + a.Skill, Effects: []Effect{eff}}, nil
	}
	docs, r, err := resolveDocs(ctx, c.Skills, a.Skill, a.Docs, a.IncludeAllDocs)
	if err != nil || r.IsError {
		return r, err
	}
	eff.Docs = docs
	if a.IncludeAllDocs {
		return Result{Text: "selected all documents of " + a.Skill, Effects: []Effect{eff}}, nil
	}
	list := "none"
	if len(docs) > 0 {
		list = strings.Join(docs, ", ")
	}
	return Result{Text: fmt.Sprintf("selected documents of %s (%s): %s", a.Skill, eff.DocsMode, list), Effects: []Effect{eff}}, nil
}

// ListDocs returns skill_list_docs: the JSON array of a skill's document
// paths, in byte order.
func ListDocs() Tool {
	return builtin(ListDocsName,
		"List the documents of a skill (paths relative to the skill folder) that skill_load and skill_select_docs accept.",
		schemaFor[SkillArg](), runListDocs)
}

func runListDocs(ctx context.Context, c Call) (Result, error) {
	var a SkillArg
	if r, ok := decode(ListDocsName, c.Args, &a); !ok {
		return r, nil
	}
	if r, ok := checkSkill(c.Skills, a.Skill); !ok {
		return r, nil
	}
	docs, err := c.Skills.Docs(ctx, a.Skill)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Errorf("Error: %v", err), staleOnly(err)
	}
	if docs == nil {
		docs = []string{}
	}
	out, err := json.Marshal(docs)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: string(out)}, nil
}

// Read returns skill_read: one file of a loaded skill by its path relative
// to the skill folder. Paths outside the skill's manifest are refused,
// files over the read cap (registry Options.MaxReadBytes) fail, and binary
// files are described (MIME type and size) rather than dumped.
func Read() Tool {
	return builtin(ReadName,
		"Read one file of a loaded skill by its path relative to the skill folder (a script, reference or asset it mentions). Binary files are described, not shown.",
		schemaFor[ReadArgs](), runRead)
}

func runRead(ctx context.Context, c Call) (Result, error) {
	var a ReadArgs
	if r, ok := decode(ReadName, c.Args, &a); !ok {
		return r, nil
	}
	// A skill the user invoked directly is loaded even when it is hidden
	// from the model: its files may then be read too.
	loaded := c.State != nil && c.State.Loaded(a.Skill)
	if r, ok := checkSkill(c.Skills, a.Skill); !ok && !(loaded && skill.ValidName(a.Skill) && listed(c.Skills, a.Skill)) {
		return r, nil
	}
	if !loaded {
		return Errorf("Error: skill %q is not loaded; call %s or %s first", a.Skill, SkillName, LoadName), nil
	}
	if a.Path == "" {
		return Errorf("Error: %s needs a path, relative to the folder of skill %q (for example references/api.md)", ReadName, a.Skill), nil
	}
	data, err := c.Skills.ReadFile(ctx, a.Skill, a.Path)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return Result{}, ctx.Err()
		case errors.Is(err, registry.ErrNotFound):
			return Errorf("Error: %q is not a file of skill %q; paths are relative to the skill folder (see %s for documents)", a.Path, a.Skill, ListDocsName), nil
		case errors.Is(err, registry.ErrTooLarge):
			return Errorf("Error: %v; it cannot be read whole, process it with a command instead (workspace_exec, when available)", err), nil
		case errors.Is(err, registry.ErrStale):
			return Errorf("Error: %q of skill %q changed on disk after the skills were discovered (%v); it can be read again once the skills are refreshed", a.Path, a.Skill, err), err
		}
		return Errorf("Error: %v", err), nil
	}
	if utf8.Valid(data) && !slices.Contains(data, 0) {
		return Result{Text: string(data)}, nil
	}
	mt := mimetype.Detect(data)
	return Result{Text: fmt.Sprintf("%s is a binary file (%s, %d bytes); its content is not shown. Use it from a command (workspace_exec, when available).", a.Path, mt.String(), len(data))}, nil
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

// resolveDocs checks the requested documents of a skill (or, with all,
// takes every document) with the snapshot's one resolver and returns them
// deduplicated and in byte order. Unknown ones are an error result listing
// the valid ones.
func resolveDocs(ctx context.Context, snap *registry.Snapshot, name string, want []string, all bool) ([]string, Result, error) {
	var docs []string
	var err error
	if all {
		docs, err = snap.Docs(ctx, name)
	} else {
		docs, err = snap.ResolveDocs(ctx, name, want)
	}
	if err == nil {
		return docs, Result{}, nil
	}
	if ctx.Err() != nil {
		return nil, Result{}, ctx.Err()
	}
	var de *registry.DocsError
	if !errors.As(err, &de) {
		return nil, Errorf("Error: %v", err), staleOnly(err)
	}
	unknown := make([]string, len(de.Unknown))
	for i, u := range de.Unknown {
		unknown[i] = strconv.Quote(u)
	}
	note := ""
	if slices.Contains(de.Unknown, skill.FileName) {
		note = " (" + skill.FileName + " is the skill's instructions, always loaded, not a document)"
	}
	if len(de.Valid) == 0 {
		return nil, Errorf("Error: skill %q has no documents; unknown: %s%s", name, strings.Join(unknown, ", "), note), nil
	}
	return nil, Errorf("Error: unknown documents for skill %q: %s. Valid documents: %s%s", name, strings.Join(unknown, ", "), strings.Join(de.Valid, ", "), note), nil
}

// staleOnly returns err when it wraps registry.ErrStale (Tool.Call then
// renews the snapshot and runs the handler again), else nil: the other
// read failures are the model's to see, in the Result.
func staleOnly(err error) error {
	if errors.Is(err, registry.ErrStale) {
		return err
	}
	return nil
}
