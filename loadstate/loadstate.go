// Package loadstate keeps an agent's skill load state: which skills are
// loaded, which of their documents are selected, in what order they were
// last used, and for how long loaded content stays in requests.
//
// The state lives in a session's string map under the keys this package
// owns (LoadedKey, DocsKey, LoadedOrderKey); nothing else parses them. A
// tool call's effects become a state delta (Apply) and the typed records
// an event carries of what it brought into the conversation (Records);
// lifetimes decide when the state is reset (Reset); declared loads are
// validated as one batch before the first request (Declare).
package loadstate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// Lifetime is how long a load lasts: how long loaded instructions and
// documents stay in the model's requests. The zero value is Turn.
type Lifetime int

const (
	// Turn keeps loads for the rest of the turn: the agent's next user
	// message clears them. The default.
	Turn Lifetime = iota
	// Once shows loaded content in the next model request only; the
	// model response that follows clears the load.
	Once
	// Session keeps loads until they are evicted or the session ends.
	Session
)

// String returns the lifetime's name: "turn", "once" or "session".
func (l Lifetime) String() string {
	switch l {
	case Turn:
		return "turn"
	case Once:
		return "once"
	case Session:
		return "session"
	}
	return fmt.Sprintf("Lifetime(%d)", int(l))
}

// Valid reports whether l is one of the defined lifetimes.
func (l Lifetime) Valid() bool { return l >= Turn && l <= Session }

// ParseLifetime reads a lifetime name; anything but once, turn or session
// is an error naming the value.
func ParseLifetime(s string) (Lifetime, error) {
	for _, l := range []Lifetime{Turn, Once, Session} {
		if s == l.String() {
			return l, nil
		}
	}
	return 0, fmt.Errorf("load lifetime %q is not one of once, turn, session", s)
}

// MarshalText encodes the lifetime by name.
func (l Lifetime) MarshalText() ([]byte, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("load lifetime %d is not one of Once, Turn, Session", int(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText decodes a lifetime name (see ParseLifetime).
func (l *Lifetime) UnmarshalText(b []byte) error {
	v, err := ParseLifetime(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// LifetimeOf reads the lifetime a Load record carries; empty (records
// written without one) means Turn, and so does a name this build does not
// know.
func LifetimeOf(rec session.Load) Lifetime {
	l, err := ParseLifetime(rec.Lifetime)
	if err != nil {
		return Turn
	}
	return l
}

// View is one agent's view of a session's load state. It implements
// tools.State. Keys of the older single-agent layout
// (temp:skill:loaded:<name>) count as the agent's.
type View struct {
	state map[string]string
	agent string
}

// Of returns agent's view of state. The map is read, never written.
func Of(state map[string]string, agent string) View { return View{state: state, agent: agent} }

// Loaded reports whether the skill is loaded for the agent.
func (v View) Loaded(name string) bool {
	if !validKeyName(name) {
		return false
	}
	return v.state[LoadedKey(v.agent, name)] != "" || v.state[legacyLoadedKey(name)] != ""
}

// Docs returns the agent's document selection for the skill; all reports
// that every document is selected.
func (v View) Docs(name string) (docs []string, all bool) {
	key := DocsKey(v.agent, name)
	val, ok := v.state[key]
	if !ok {
		key = legacyDocsKey(name)
		if val, ok = v.state[key]; !ok {
			return nil, false
		}
	}
	all, docs, err := decodeDocs(key, val)
	if err != nil {
		return nil, false
	}
	return docs, all
}

// Skills returns the loaded skills, least recently used first: legacy
// loads missing from the recorded use order (they predate every per-agent
// load), then the recorded use order, then per-agent loads missing from
// it; each group without a recorded order in byte order.
func (v View) Skills() []string {
	loaded := loadedSkills(v.state, v.agent)
	var legacy []string
	for k, val := range v.state {
		if name, ok := strings.CutPrefix(k, legacyLoadedPrefix); ok && val != "" && validKeyName(name) && !slices.Contains(loaded, name) {
			legacy = append(legacy, name)
		}
	}
	order, _ := loadedOrder(v.state, v.agent)
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

// working is a mutable copy of one agent's load state.
type working struct {
	agent  string
	old    []string // the loaded skills before any change
	order  []string
	loaded map[string]bool
	docs   map[string]string // encoded selection; absent = none
}

func newWorking(state map[string]string, agent string) *working {
	v := Of(state, agent)
	w := &working{agent: agent, loaded: map[string]bool{}, docs: map[string]string{}}
	w.order = v.Skills()
	w.old = slices.Clone(w.order)
	for _, n := range w.order {
		w.loaded[n] = true
		if d, all := v.Docs(n); all || d != nil {
			w.docs[n] = encodeDocs(all, d)
		}
	}
	return w
}

func (w *working) touch(name string) {
	w.order = slices.DeleteFunc(w.order, func(s string) bool { return s == name })
	w.order = append(w.order, name)
	w.loaded[name] = true
}

func (w *working) evict(name string) {
	w.order = slices.DeleteFunc(w.order, func(s string) bool { return s == name })
	delete(w.loaded, name)
	delete(w.docs, name)
}

// CheckEffects reports the first effect that cannot be recorded: a skill
// name that breaks the skill name rule (a "/" would write another agent's
// keys), an unknown kind or documents mode, a document path that is not
// in its clean form inside the skill (see registry.CleanPath), or
// documents on an effect that selects none. Apply checks them too; a
// caller recording results runs it before anything is appended.
func CheckEffects(effects []tools.Effect) error {
	for i, e := range effects {
		where := fmt.Sprintf("effect %d", i+1)
		switch {
		case !skill.ValidName(e.Skill):
			return fmt.Errorf("%s: skill name %q does not follow the skill name rule (lowercase letters, digits and single hyphens)", where, e.Skill)
		case e.Kind != tools.EffectLoad && e.Kind != tools.EffectSelectDocs:
			return fmt.Errorf("%s on skill %q: kind %q is not %q or %q", where, e.Skill, e.Kind, tools.EffectLoad, tools.EffectSelectDocs)
		}
		switch e.DocsMode {
		case "", tools.DocsKeep, tools.DocsClear:
			if len(e.Docs) > 0 || e.AllDocs {
				return fmt.Errorf("%s on skill %q: documents mode %q takes no documents", where, e.Skill, e.DocsMode)
			}
		case tools.DocsAdd, tools.DocsReplace:
		default:
			return fmt.Errorf("%s on skill %q has unknown docs mode %q", where, e.Skill, e.DocsMode)
		}
		for _, d := range e.Docs {
			if c, err := registry.CleanPath(d); err != nil || c != d || c == "." || c == skill.FileName {
				return fmt.Errorf("%s on skill %q: document %q is not a clean path to a document inside the skill", where, e.Skill, d)
			}
		}
	}
	return nil
}

// Apply returns the state delta that records a tool call's effects for
// agent: loads and document selections, the use order (a document
// selection counts as a use), and evictions of the least recently used
// skills beyond maxLoaded (0 means no cap). The delta also moves keys of
// the single-agent layout of the touched skills to the agent's keys.
func Apply(state map[string]string, agent string, effects []tools.Effect, maxLoaded int) (map[string]*string, error) {
	if maxLoaded < 0 {
		return nil, fmt.Errorf("max loaded skills is %d; use 0 for no cap or a positive count", maxLoaded)
	}
	if err := CheckEffects(effects); err != nil {
		return nil, err
	}
	w := newWorking(state, agent)
	for _, e := range effects {
		w.touch(e.Skill)
		cur := w.docs[e.Skill]
		switch e.DocsMode {
		case tools.DocsKeep, "":
		case tools.DocsReplace:
			if e.AllDocs {
				w.docs[e.Skill] = DocsAll
			} else if len(e.Docs) > 0 {
				w.docs[e.Skill] = encodeDocs(false, sortedUnique(e.Docs))
			} else {
				delete(w.docs, e.Skill)
			}
		case tools.DocsAdd:
			switch {
			case e.AllDocs || cur == DocsAll:
				w.docs[e.Skill] = DocsAll
			default:
				_, have, _ := decodeDocs(DocsKey(agent, e.Skill), cur)
				if cur == "" {
					have = nil
				}
				if merged := sortedUnique(append(slices.Clone(have), e.Docs...)); len(merged) > 0 {
					w.docs[e.Skill] = encodeDocs(false, merged)
				}
			}
		case tools.DocsClear:
			delete(w.docs, e.Skill)
		}
	}
	if maxLoaded > 0 {
		for len(w.order) > maxLoaded {
			w.evict(w.order[0])
		}
	}
	return w.delta(state), nil
}

// delta compares the working copy with state and returns the changes,
// including deletion of single-agent keys for skills now held per agent.
func (w *working) delta(state map[string]string) map[string]*string {
	d := map[string]*string{}
	set := func(k, val string) {
		if old, ok := state[k]; !ok || old != val {
			d[k] = session.Ptr(val)
		}
	}
	del := func(k string) {
		if _, ok := state[k]; ok {
			d[k] = nil
		}
	}
	for _, n := range w.old {
		if !w.loaded[n] {
			del(LoadedKey(w.agent, n))
			del(DocsKey(w.agent, n))
			del(legacyLoadedKey(n))
			del(legacyDocsKey(n))
		}
	}
	for _, n := range w.order {
		set(LoadedKey(w.agent, n), LoadedValue)
		if docs, ok := w.docs[n]; ok {
			set(DocsKey(w.agent, n), docs)
		} else {
			del(DocsKey(w.agent, n))
		}
		del(legacyLoadedKey(n))
		del(legacyDocsKey(n))
	}
	if len(w.order) == 0 {
		del(LoadedOrderKey(w.agent))
	} else {
		set(LoadedOrderKey(w.agent), encodeOrder(w.order))
	}
	return d
}

// Reset returns the delta that unloads every skill of agent, keys of the
// single-agent layout included (they count as every agent's). Keys of an
// agent whose name extends agent's with "/" (agent "a/b" for agent "a")
// are not agent's and stay.
func Reset(state map[string]string, agent string) map[string]*string {
	d := map[string]*string{}
	own := func(k, prefix string) bool {
		name, ok := strings.CutPrefix(k, prefix)
		return ok && !strings.Contains(name, "/")
	}
	for k := range state {
		if own(k, LoadedPrefix(agent)) || own(k, DocsPrefix(agent)) || k == LoadedOrderKey(agent) ||
			own(k, legacyLoadedPrefix) || own(k, legacyDocsPrefix) {
			d[k] = nil
		}
	}
	return d
}

// Records returns what a call with these effects brings into agent's
// conversation, one session.Load per effect that shows anything, for the
// event that records the call. state is the agent's state before the
// effects apply: a document selection on a skill that was not loaded
// loads it, so its record brings the instructions too. An effect whose
// AllDocs is set must list the documents it selected in Docs (the tools
// and Declare do), so that the record names what was shown then.
func Records(state map[string]string, agent string, effects []tools.Effect, l Lifetime) []session.Load {
	v := Of(state, agent)
	loaded := map[string]bool{}
	var out []session.Load
	for _, e := range effects {
		rec := session.Load{Skill: e.Skill, Inline: e.Inline, Lifetime: l.String()}
		rec.Instructions = e.Kind == tools.EffectLoad || (!loaded[e.Skill] && !v.Loaded(e.Skill))
		loaded[e.Skill] = true
		if e.DocsMode == tools.DocsReplace || e.DocsMode == tools.DocsAdd {
			rec.Docs = sortedUnique(e.Docs)
		}
		if rec.Instructions || rec.Inline || len(rec.Docs) > 0 {
			out = append(out, rec)
		}
	}
	return out
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
