package loadstate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/skillkit/skillkit/session"
)

// ActivationMode says how the tools of an activated tool set combine with
// the agent's own tools in a request. The skill tools (and workspace_exec)
// are not the agent's own: they stay in every mode.
type ActivationMode int

const (
	// ActivateInclude, the default, adds the set's tools to the agent's
	// own; an own tool of the same name is replaced by the activated one.
	ActivateInclude ActivationMode = iota
	// ActivateOnly makes the activated tools the agent's only own tools.
	// When Include and Only activations are in effect together, Only
	// wins: the request's own tools are those of the Only sets alone.
	ActivateOnly
)

// String returns the mode's name: include or only.
func (m ActivationMode) String() string {
	switch m {
	case ActivateInclude:
		return "include"
	case ActivateOnly:
		return "only"
	}
	return fmt.Sprintf("ActivationMode(%d)", int(m))
}

// Valid reports whether m is one of the defined modes.
func (m ActivationMode) Valid() bool { return m == ActivateInclude || m == ActivateOnly }

// ActivationLifetime says how long an activation lasts. It is apart from
// the load Lifetime: the tools a skill brings may outlast its
// instructions, or not.
type ActivationLifetime int

const (
	// ActivationInvocation, the default, lasts for the rest of the
	// agent's current turn (every later request of the same run) and
	// ends when the agent's next turn starts.
	ActivationInvocation ActivationLifetime = iota
	// ActivationSession lasts for the rest of the session.
	ActivationSession
)

// String returns the lifetime's name: invocation or session.
func (l ActivationLifetime) String() string {
	switch l {
	case ActivationInvocation:
		return "invocation"
	case ActivationSession:
		return "session"
	}
	return fmt.Sprintf("ActivationLifetime(%d)", int(l))
}

// Valid reports whether l is one of the defined lifetimes.
func (l ActivationLifetime) Valid() bool { return l == ActivationInvocation || l == ActivationSession }

// Activation is one tool set in effect for an agent: activated by loading
// a skill, with the mode and lifetime of the rule that matched. Identical
// activations count once.
type Activation struct {
	// Set is the tool set's name.
	Set string
	// Mode is how its tools combine with the agent's own.
	Mode ActivationMode
	// Lifetime is how long it lasts.
	Lifetime ActivationLifetime
}

// activationJSON is an Activation as its state key stores it.
type activationJSON struct {
	Set      string `json:"set"`
	Mode     string `json:"mode"`
	Lifetime string `json:"lifetime"`
}

// ActivatedKey is the key holding agent's activations, a JSON array of
// {"set", "mode", "lifetime"} objects sorted by set, mode and lifetime:
// temp:skill:activated_by_agent:<agent>.
func ActivatedKey(agent string) string { return activatedByAgentPrefix + agent }

const activatedByAgentPrefix = "temp:skill:activated_by_agent:"

// Activations returns agent's activations in effect, sorted by set, mode
// and lifetime. A value this build cannot read (written by hand, or by a
// newer build with modes it does not know) yields the entries it can
// read; none when it is not a JSON array.
func (v View) Activations() []Activation { return activations(v.state, v.agent) }

func activations(state map[string]string, agent string) []Activation {
	val := state[ActivatedKey(agent)]
	if val == "" {
		return nil
	}
	var raw []activationJSON
	if err := json.Unmarshal([]byte(val), &raw); err != nil {
		return nil
	}
	out := make([]Activation, 0, len(raw))
	for _, r := range raw {
		a := Activation{Set: r.Set}
		switch r.Mode {
		case "include":
			a.Mode = ActivateInclude
		case "only":
			a.Mode = ActivateOnly
		default:
			continue
		}
		switch r.Lifetime {
		case "invocation":
			a.Lifetime = ActivationInvocation
		case "session":
			a.Lifetime = ActivationSession
		default:
			continue
		}
		if r.Set != "" {
			out = append(out, a)
		}
	}
	return canonical(out)
}

// canonical sorts activations and drops repeats.
func canonical(acts []Activation) []Activation {
	slices.SortFunc(acts, func(a, b Activation) int {
		return cmp.Or(cmp.Compare(a.Set, b.Set), cmp.Compare(a.Mode, b.Mode), cmp.Compare(a.Lifetime, b.Lifetime))
	})
	return slices.Compact(acts)
}

// Activate returns the delta that adds acts to agent's activations in
// state, or nil when every one is in effect already. An activation whose
// set is empty or whose mode or lifetime is not defined is an error
// naming it; nothing is added then.
func Activate(state map[string]string, agent string, acts []Activation) (map[string]*string, error) {
	for i, a := range acts {
		switch {
		case a.Set == "":
			return nil, fmt.Errorf("loadstate: activation %d names no tool set", i)
		case !a.Mode.Valid():
			return nil, fmt.Errorf("loadstate: activation %d (%s): mode %d is not ActivateInclude or ActivateOnly", i, a.Set, int(a.Mode))
		case !a.Lifetime.Valid():
			return nil, fmt.Errorf("loadstate: activation %d (%s): lifetime %d is not ActivationInvocation or ActivationSession", i, a.Set, int(a.Lifetime))
		}
	}
	cur := activations(state, agent)
	next := canonical(slices.Concat(cur, acts))
	if slices.Equal(cur, next) {
		return nil, nil
	}
	return map[string]*string{ActivatedKey(agent): session.Ptr(encodeActivations(next))}, nil
}

// EndInvocation returns the delta that ends agent's invocation-lifetime
// activations (when its next turn starts), or nil when it has none.
func EndInvocation(state map[string]string, agent string) map[string]*string {
	key := ActivatedKey(agent)
	val, ok := state[key]
	if !ok {
		return nil
	}
	cur := activations(state, agent)
	kept := slices.DeleteFunc(slices.Clone(cur), func(a Activation) bool { return a.Lifetime == ActivationInvocation })
	switch {
	case len(kept) == len(cur) && val == encodeActivations(cur):
		return nil
	case len(kept) == 0: // what is left unreadable goes too
		return map[string]*string{key: nil}
	}
	return map[string]*string{key: session.Ptr(encodeActivations(kept))}
}

func encodeActivations(acts []Activation) string {
	raw := make([]activationJSON, len(acts))
	for i, a := range acts {
		raw[i] = activationJSON{Set: a.Set, Mode: a.Mode.String(), Lifetime: a.Lifetime.String()}
	}
	b, _ := json.Marshal(raw) // strings only: cannot fail
	return string(b)
}
