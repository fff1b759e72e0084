package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// Mode is the lifetime of a skill load: how long loaded instructions and
// documents stay in the model's requests.
type Mode string

const (
	// ModeOnce shows loaded content in the next model request only; the
	// model response that follows clears the load.
	ModeOnce Mode = "once"
	// ModeTurn keeps loads for the rest of the turn; the next user message
	// clears them. The default.
	ModeTurn Mode = "turn"
	// ModeSession keeps loads until they are evicted or the session ends.
	ModeSession Mode = "session"
)

// DefaultMode is the lifetime used when none is configured.
const DefaultMode = ModeTurn

// ParseMode reads a lifetime name. Anything but once, turn or session is
// an error naming the value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeOnce, ModeTurn, ModeSession:
		return m, nil
	}
	return "", fmt.Errorf("load mode %q is not one of once, turn, session", s)
}

// AgentState is one agent's view of a session's skill load state. It
// implements tools.State. Keys written by the legacy single-agent layout
// (temp:skill:loaded:<name>) are read too.
type AgentState struct {
	state map[string]string
	agent string
}

// NewAgentState returns agent's view of state. The map is read, never
// written.
func NewAgentState(state map[string]string, agent string) AgentState {
	return AgentState{state: state, agent: agent}
}

// Loaded reports whether the skill is loaded for the agent.
func (a AgentState) Loaded(name string) bool {
	if !validKeyName(name) {
		return false
	}
	return a.state[LoadedKey(a.agent, name)] != "" || a.state[LegacyLoadedKey(name)] != ""
}

// Docs returns the agent's document selection for the skill.
func (a AgentState) Docs(name string) (docs []string, all bool) {
	key := DocsKey(a.agent, name)
	v, ok := a.state[key]
	if !ok {
		key = LegacyDocsKey(name)
		if v, ok = a.state[key]; !ok {
			return nil, false
		}
	}
	all, docs, err := DecodeDocs(key, v)
	if err != nil {
		return nil, false
	}
	return docs, all
}

// Skills returns the loaded skills, least recently used first: legacy
// loads missing from the recorded use order (they predate every per-agent
// load, as MigrateLegacyKeys has it), then the recorded use order, then
// per-agent loads missing from it; each group without a recorded order in
// byte order.
func (a AgentState) Skills() []string {
	loaded := LoadedSkills(a.state, a.agent)
	var legacy []string
	for k, v := range a.state {
		if name, ok := strings.CutPrefix(k, LegacyLoadedPrefix); ok && v != "" && validKeyName(name) && !slices.Contains(loaded, name) {
			legacy = append(legacy, name)
		}
	}
	order, _ := LoadedOrder(a.state, a.agent)
	var recorded []string
	for _, n := range order {
		if (slices.Contains(loaded, n) || slices.Contains(legacy, n)) && !slices.Contains(recorded, n) {
			recorded = append(recorded, n)
		}
	}
	missing := func(names []string) []string {
		var out []string
		for _, n := range names {
			if !slices.Contains(recorded, n) {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	out := make([]string, 0, len(loaded)+len(legacy))
	out = append(out, missing(legacy)...)
	out = append(out, recorded...)
	return append(out, missing(loaded)...)
}

// loadView is a mutable copy of one agent's load state.
type loadView struct {
	agent  string
	old    []string // the loaded skills before any change, as in state
	order  []string
	loaded map[string]bool
	docs   map[string]string // encoded selection; absent = none
}

func newLoadView(state map[string]string, agent string) *loadView {
	a := NewAgentState(state, agent)
	v := &loadView{agent: agent, loaded: map[string]bool{}, docs: map[string]string{}}
	v.order = a.Skills()
	v.old = slices.Clone(v.order)
	for _, n := range v.order {
		v.loaded[n] = true
		if d, all := a.Docs(n); all || d != nil {
			v.docs[n] = EncodeDocs(all, d)
		}
	}
	return v
}

func (v *loadView) touch(name string) {
	v.order = slices.DeleteFunc(v.order, func(s string) bool { return s == name })
	v.order = append(v.order, name)
	v.loaded[name] = true
}

func (v *loadView) evict(name string) {
	v.order = slices.DeleteFunc(v.order, func(s string) bool { return s == name })
	delete(v.loaded, name)
	delete(v.docs, name)
}

// EffectsDelta returns the state delta that records a tool call's effects
// for agent: loads and document selections, the use order (a document
// selection counts as a use), and evictions of the least recently used
// skills beyond maxLoaded (0 means no cap). The delta also moves legacy
// keys of the touched skills to the per-agent layout.
func EffectsDelta(state map[string]string, agent string, effects []tools.Effect, maxLoaded int) (map[string]*string, error) {
	if maxLoaded < 0 {
		return nil, fmt.Errorf("max loaded skills is %d; use 0 for no cap or a positive count", maxLoaded)
	}
	v := newLoadView(state, agent)
	for _, e := range effects {
		if e.Skill == "" {
			return nil, fmt.Errorf("effect %q has no skill", e.Kind)
		}
		v.touch(e.Skill)
		cur := v.docs[e.Skill]
		switch e.DocsMode {
		case tools.DocsKeep, "":
		case tools.DocsReplace:
			if e.AllDocs {
				v.docs[e.Skill] = DocsAll
			} else if len(e.Docs) > 0 {
				v.docs[e.Skill] = EncodeDocs(false, sortedUnique(e.Docs))
			} else {
				delete(v.docs, e.Skill)
			}
		case tools.DocsAdd:
			switch {
			case e.AllDocs || cur == DocsAll:
				v.docs[e.Skill] = DocsAll
			default:
				_, have, _ := DecodeDocs(DocsKey(agent, e.Skill), cur)
				if cur == "" {
					have = nil
				}
				merged := sortedUnique(append(slices.Clone(have), e.Docs...))
				if len(merged) > 0 {
					v.docs[e.Skill] = EncodeDocs(false, merged)
				}
			}
		case tools.DocsClear:
			delete(v.docs, e.Skill)
		default:
			return nil, fmt.Errorf("effect on skill %q has unknown docs mode %q", e.Skill, e.DocsMode)
		}
	}
	if maxLoaded > 0 {
		for len(v.order) > maxLoaded {
			v.evict(v.order[0])
		}
	}
	return v.delta(state), nil
}

// delta compares the view with state and returns the changes, including
// deletion of legacy keys for skills the view now holds per agent.
func (v *loadView) delta(state map[string]string) map[string]*string {
	d := map[string]*string{}
	set := func(k, val string) {
		if old, ok := state[k]; !ok || old != val {
			d[k] = Ptr(val)
		}
	}
	del := func(k string) {
		if _, ok := state[k]; ok {
			d[k] = nil
		}
	}
	old := v.old
	for _, n := range old {
		if !v.loaded[n] {
			del(LoadedKey(v.agent, n))
			del(DocsKey(v.agent, n))
		}
	}
	for _, n := range v.order {
		set(LoadedKey(v.agent, n), LoadedValue)
		if docs, ok := v.docs[n]; ok {
			set(DocsKey(v.agent, n), docs)
		} else {
			del(DocsKey(v.agent, n))
		}
		del(LegacyLoadedKey(n))
		del(LegacyDocsKey(n))
	}
	for _, n := range old {
		if !v.loaded[n] {
			del(LegacyLoadedKey(n))
			del(LegacyDocsKey(n))
		}
	}
	if len(v.order) == 0 {
		del(LoadedOrderKey(v.agent))
	} else {
		set(LoadedOrderKey(v.agent), EncodeOrder(v.order))
	}
	return d
}

// ResetDelta returns the delta that unloads every skill of agent, or of
// every agent when agent is "" (legacy keys included). Keys of an agent
// whose name extends agent's with "/" (agent "a/b" for agent "a") are not
// agent's and stay.
func ResetDelta(state map[string]string, agent string) map[string]*string {
	d := map[string]*string{}
	ownKey := func(k, prefix string) bool {
		name, ok := strings.CutPrefix(k, prefix)
		return ok && !strings.Contains(name, "/")
	}
	for k := range state {
		switch {
		case agent == "" && strings.HasPrefix(k, SkillStatePrefix),
			agent != "" && (ownKey(k, LoadedPrefix(agent)) || ownKey(k, DocsPrefix(agent)) || k == LoadedOrderKey(agent)):
			d[k] = nil
		}
	}
	return d
}

// MergeDelta adds the changes of src to dst; later changes win.
func MergeDelta(dst, src map[string]*string) map[string]*string {
	if dst == nil {
		dst = map[string]*string{}
	}
	maps.Copy(dst, src)
	return dst
}

func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Errors of declared loads (ResolveLoads), for callers to branch on.
var (
	// ErrInvalidLoadRequest: a declaration is malformed, conflicts with
	// another, names documents the skill does not have, or the batch
	// exceeds the loaded-skills cap.
	ErrInvalidLoadRequest = errors.New("invalid skill load request")
	// ErrSkillUnavailable: the skill is not visible to this request or its
	// instructions cannot be read.
	ErrSkillUnavailable = errors.New("skill unavailable")
)

// LoadRequest declares, before the first model request, that a skill must
// be loaded (the seed's WithSkillLoads). SKILL.md is always loaded; Docs
// selects documents by path (replacing the current selection when not
// empty); IncludeAllDocs selects every document. Docs and IncludeAllDocs
// are exclusive.
type LoadRequest struct {
	Name           string   `json:"name"`
	Docs           []string `json:"docs,omitempty"`
	IncludeAllDocs bool     `json:"include_all_docs,omitempty"`
}

// ResolveLoads validates a batch of declared loads atomically against the
// snapshot the request will use and returns the effects to record. Either
// every declaration is valid and the effects cover all of them, or nothing
// is returned and the error (wrapping ErrInvalidLoadRequest or
// ErrSkillUnavailable) names the first bad declaration. Equal declarations
// of one skill (same normalised documents and include-all flag) merge;
// different ones conflict. maxLoaded (0: no cap) bounds the merged count.
func ResolveLoads(ctx context.Context, snap *registry.Snapshot, reqs []LoadRequest, maxLoaded int) ([]tools.Effect, error) {
	if maxLoaded < 0 {
		return nil, fmt.Errorf("max loaded skills is %d; use 0 for no cap or a positive count", maxLoaded)
	}
	type norm struct {
		docs []string
		all  bool
	}
	merged := map[string]norm{}
	var order []string
	for i, r := range reqs {
		where := fmt.Sprintf("load request %d (skill %q)", i+1, r.Name)
		if !skill.ValidName(r.Name) {
			return nil, fmt.Errorf("%w: %s: the name must be a valid skill name", ErrInvalidLoadRequest, where)
		}
		if r.IncludeAllDocs && len(r.Docs) > 0 {
			return nil, fmt.Errorf("%w: %s: set Docs or IncludeAllDocs, not both", ErrInvalidLoadRequest, where)
		}
		n := norm{all: r.IncludeAllDocs}
		for _, d := range r.Docs {
			c := path.Clean(strings.TrimPrefix(d, "./"))
			if c == skill.FileName {
				return nil, fmt.Errorf("%w: %s: SKILL.md is always loaded and is not a document; leave it out of Docs", ErrInvalidLoadRequest, where)
			}
			n.docs = append(n.docs, c)
		}
		n.docs = sortedUnique(n.docs)
		if prev, ok := merged[r.Name]; ok {
			if prev.all != n.all || !slices.Equal(prev.docs, n.docs) {
				return nil, fmt.Errorf("%w: %s conflicts with an earlier declaration of the same skill (different documents); declare each skill once or identically", ErrInvalidLoadRequest, where)
			}
			continue
		}
		if snap == nil {
			return nil, fmt.Errorf("%w: %s: no skills are available", ErrSkillUnavailable, where)
		}
		if _, ok := snap.Lookup(r.Name); !ok {
			return nil, fmt.Errorf("%w: %s is unknown or not visible to this request", ErrSkillUnavailable, where)
		}
		if _, err := snap.Body(ctx, r.Name); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSkillUnavailable, where, err)
		}
		if len(n.docs) > 0 {
			valid, err := snap.Docs(ctx, r.Name)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrSkillUnavailable, where, err)
			}
			for _, d := range n.docs {
				if slices.Contains(valid, d) {
					continue
				}
				if len(valid) == 0 {
					return nil, fmt.Errorf("%w: %s: document %q does not exist; the skill has no documents, leave Docs empty", ErrInvalidLoadRequest, where, d)
				}
				return nil, fmt.Errorf("%w: %s: document %q does not exist; valid documents: %s", ErrInvalidLoadRequest, where, d, strings.Join(valid, ", "))
			}
		}
		merged[r.Name] = n
		order = append(order, r.Name)
	}
	if maxLoaded > 0 && len(order) > maxLoaded {
		return nil, fmt.Errorf("%w: %d skills declared, more than the cap of %d loaded skills", ErrInvalidLoadRequest, len(order), maxLoaded)
	}
	out := make([]tools.Effect, 0, len(order))
	for _, name := range order {
		n := merged[name]
		e := tools.Effect{Kind: tools.EffectLoad, Skill: name, DocsMode: tools.DocsKeep}
		if n.all {
			e.DocsMode, e.AllDocs = tools.DocsReplace, true
		} else if len(n.docs) > 0 {
			e.DocsMode, e.Docs = tools.DocsReplace, n.docs
		}
		out = append(out, e)
	}
	return out, nil
}
