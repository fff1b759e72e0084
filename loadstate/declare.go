package loadstate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// Errors of declared loads (Declare), for callers to branch on.
var (
	// ErrInvalidLoadRequest: a declaration is malformed, conflicts with
	// another, names documents the skill does not have, or the batch
	// exceeds the loaded-skills cap.
	ErrInvalidLoadRequest = errors.New("invalid skill load request")
	// ErrSkillUnavailable: the skill is not visible to this request or its
	// instructions cannot be read.
	ErrSkillUnavailable = errors.New("skill unavailable")
)

// Declaration says, before the first model request, that a skill must be
// loaded. Its instructions are always loaded; Docs selects documents by
// path (replacing the current selection when not empty); AllDocs selects
// every document. Docs and AllDocs are exclusive.
type Declaration struct {
	// Skill is the exact skill name.
	Skill string `json:"skill"`
	// Docs are documents of the skill, relative to its folder.
	Docs []string `json:"docs,omitempty"`
	// AllDocs selects every document.
	AllDocs bool `json:"all_docs,omitempty"`
}

// Declare validates a batch of declared loads atomically against the
// snapshot the request will use and returns the effects to record (with
// AllDocs resolved to the documents the snapshot lists). Either every
// declaration is valid and the effects cover all of them, or nothing is
// returned and the error (wrapping ErrInvalidLoadRequest or
// ErrSkillUnavailable) names the first bad declaration. Equal declarations
// of one skill (same documents and AllDocs) merge; different ones
// conflict. maxLoaded (0: no cap) bounds the merged count.
func Declare(ctx context.Context, snap *registry.Snapshot, decls []Declaration, maxLoaded int) ([]tools.Effect, error) {
	if maxLoaded < 0 {
		return nil, fmt.Errorf("max loaded skills is %d; use 0 for no cap or a positive count", maxLoaded)
	}
	type norm struct {
		docs []string
		all  bool
	}
	merged := map[string]norm{}
	var order []string
	for i, d := range decls {
		where := fmt.Sprintf("declaration %d (skill %q)", i+1, d.Skill)
		if !skill.ValidName(d.Skill) {
			return nil, fmt.Errorf("%w: %s: the name must be a valid skill name", ErrInvalidLoadRequest, where)
		}
		if d.AllDocs && len(d.Docs) > 0 {
			return nil, fmt.Errorf("%w: %s: set Docs or AllDocs, not both", ErrInvalidLoadRequest, where)
		}
		n := norm{all: d.AllDocs}
		for _, doc := range d.Docs {
			c, err := registry.CleanPath(doc)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: Docs: %w", ErrInvalidLoadRequest, where, err)
			}
			if c == skill.FileName {
				return nil, fmt.Errorf("%w: %s: SKILL.md is always loaded and is not a document; leave it out of Docs", ErrInvalidLoadRequest, where)
			}
			n.docs = append(n.docs, c)
		}
		n.docs = sortedUnique(n.docs)
		if prev, ok := merged[d.Skill]; ok {
			if prev.all != n.all || !slices.Equal(prev.docs, n.docs) {
				return nil, fmt.Errorf("%w: %s conflicts with an earlier declaration of the same skill (different documents); declare each skill once or identically", ErrInvalidLoadRequest, where)
			}
			continue
		}
		if snap == nil {
			return nil, fmt.Errorf("%w: %s: no skills are available", ErrSkillUnavailable, where)
		}
		if _, ok := snap.Lookup(d.Skill); !ok {
			return nil, fmt.Errorf("%w: %s is unknown or not visible to this request", ErrSkillUnavailable, where)
		}
		_, err := snap.Body(ctx, d.Skill)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSkillUnavailable, where, err)
		}
		switch {
		case n.all:
			if n.docs, err = snap.Docs(ctx, d.Skill); err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrSkillUnavailable, where, err)
			}
		case len(n.docs) > 0:
			if _, err := snap.ResolveDocs(ctx, d.Skill, n.docs); err != nil {
				var de *registry.DocsError
				switch {
				case !errors.As(err, &de):
					return nil, fmt.Errorf("%w: %s: %w", ErrSkillUnavailable, where, err)
				case len(de.Valid) == 0:
					return nil, fmt.Errorf("%w: %s: document %q does not exist; the skill has no documents, leave Docs empty", ErrInvalidLoadRequest, where, de.Unknown[0])
				}
				return nil, fmt.Errorf("%w: %s: document %q does not exist; valid documents: %s", ErrInvalidLoadRequest, where, de.Unknown[0], strings.Join(de.Valid, ", "))
			}
		}
		merged[d.Skill] = n
		order = append(order, d.Skill)
	}
	if maxLoaded > 0 && len(order) > maxLoaded {
		return nil, fmt.Errorf("%w: %d skills declared, more than the cap of %d loaded skills", ErrInvalidLoadRequest, len(order), maxLoaded)
	}
	out := make([]tools.Effect, 0, len(order))
	for _, name := range order {
		n := merged[name]
		e := tools.Effect{Kind: tools.EffectLoad, Skill: name, DocsMode: tools.DocsKeep}
		switch {
		case n.all:
			e.DocsMode, e.AllDocs, e.Docs = tools.DocsReplace, true, n.docs
		case len(n.docs) > 0:
			e.DocsMode, e.Docs = tools.DocsReplace, n.docs
		}
		out = append(out, e)
	}
	return out, nil
}
