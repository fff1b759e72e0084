package conversation

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// Activation brings tool sets into an agent's requests when it loads a
// skill: the sets are registered as candidates, offered to the model only
// once a rule matches a load. A load is any recorded load of a skill's
// instructions — by a tool call (skill, skill_load), a declared load or a
// direct /name invocation — and takes effect from the next model request.
//
// The agent's own tools are those it was configured with; the skill tools,
// workspace_exec and tools marked with tools.Framework are the framework's
// and always stay. An activated
// tool replaces an own tool of the same name; one named like a framework
// tool is left out with a logged warning, and the framework tool stays.
type Activation struct {
	// Sets are the candidate tool sets, referred to by ToolSet.Name; their
	// tools reach the model as ToolSet.Expand names them.
	Sets []tools.ToolSet
	// Rules say which sets loading a skill activates. Rules that match
	// the same load are merged; identical (set, mode, lifetime)
	// activations count once.
	Rules []ActivationRule
	// Logger receives the warnings of tool composition (an activated tool
	// that has a framework tool's name). Nil means slog.Default().
	Logger *slog.Logger
}

// ActivationRule activates tool sets when the agent loads a skill.
type ActivationRule struct {
	// Skill is the skill whose load activates the sets.
	Skill string
	// Sets names the tool sets it activates (ToolSet.Name).
	Sets []string
	// Mode is how their tools combine with the agent's own: the zero
	// value is loadstate.ActivateInclude.
	Mode loadstate.ActivationMode
	// Lifetime is how long the activation lasts: the zero value is
	// loadstate.ActivationInvocation (the rest of the agent's turn).
	Lifetime loadstate.ActivationLifetime
}

// activator is a checked Activation: each set expanded once.
type activator struct {
	order  []string // set names, in registration order
	sets   map[string][]tools.Tool
	rules  map[string][]loadstate.Activation // by skill
	logger *slog.Logger
	warned sync.Map // tool names already warned about
}

// newActivator checks a and expands its sets; nil a is nil. Errors start
// with the field's name below Activation.
func newActivator(a *Activation) (*activator, error) {
	if a == nil {
		return nil, nil
	}
	x := &activator{sets: make(map[string][]tools.Tool, len(a.Sets)), rules: map[string][]loadstate.Activation{}, logger: a.Logger}
	if x.logger == nil {
		x.logger = slog.Default()
	}
	for i, s := range a.Sets {
		if _, dup := x.sets[s.Name]; dup {
			return nil, fmt.Errorf("Activation.Sets[%d]: a tool set named %q is registered twice; give each set its own name", i, s.Name)
		}
		ts, err := s.Expand()
		if err != nil {
			return nil, fmt.Errorf("Activation.Sets[%d]: %w", i, err)
		}
		for _, t := range ts {
			for prev, pts := range x.sets {
				if slices.ContainsFunc(pts, func(p tools.Tool) bool { return p.Name == t.Name }) {
					return nil, fmt.Errorf("Activation.Sets[%d]: tool set %q offers %s, as tool set %q does; rename a set or a tool", i, s.Name, t.Name, prev)
				}
			}
		}
		x.sets[s.Name] = ts
		x.order = append(x.order, s.Name)
	}
	for i, r := range a.Rules {
		field := fmt.Sprintf("Activation.Rules[%d]", i)
		switch {
		case !skill.ValidName(r.Skill):
			return nil, fmt.Errorf("%s.Skill %q is not a skill name; use the name of the skill whose load activates the sets", field, r.Skill)
		case len(r.Sets) == 0:
			return nil, fmt.Errorf("%s.Sets is empty; name at least one tool set of Activation.Sets", field)
		case !r.Mode.Valid():
			return nil, fmt.Errorf("%s.Mode %d is not loadstate.ActivateInclude or ActivateOnly", field, int(r.Mode))
		case !r.Lifetime.Valid():
			return nil, fmt.Errorf("%s.Lifetime %d is not loadstate.ActivationInvocation or ActivationSession", field, int(r.Lifetime))
		}
		for j, name := range r.Sets {
			if _, ok := x.sets[name]; !ok {
				return nil, fmt.Errorf("%s.Sets[%d] names %q, which is not in Activation.Sets (registered: %v); register the set or fix the name", field, j, name, x.order)
			}
			x.rules[r.Skill] = append(x.rules[r.Skill], loadstate.Activation{Set: name, Mode: r.Mode, Lifetime: r.Lifetime})
		}
	}
	return x, nil
}

// activate returns the state delta that the loads of one event bring:
// the activations of the rules matching each skill whose instructions it
// loaded, applied to state. Nil when nothing new is activated.
func (x *activator) activate(state map[string]string, agent string, loads []session.Load) (map[string]*string, error) {
	if x == nil {
		return nil, nil
	}
	var acts []loadstate.Activation
	for _, l := range loads {
		if l.Instructions {
			acts = append(acts, x.rules[l.Skill]...)
		}
	}
	if len(acts) == 0 {
		return nil, nil
	}
	d, err := loadstate.Activate(state, agent, acts)
	if err != nil {
		return nil, err
	}
	session.ApplyDelta(state, d)
	return d, nil
}

// compose returns the request's tools given the agent's activations:
// the framework tools of base first, in order, then its own tools as the
// modes say, then the activated tools in the order their sets were
// registered.
func (x *activator) compose(base []tools.Tool, acts []loadstate.Activation) []tools.Tool {
	if x == nil || len(acts) == 0 {
		return base
	}
	only := map[string]bool{}
	include := map[string]bool{}
	for _, a := range acts {
		if _, ok := x.sets[a.Set]; !ok {
			continue // recorded under a configuration that had it
		}
		if a.Mode == loadstate.ActivateOnly {
			only[a.Set] = true
		} else {
			include[a.Set] = true
		}
	}
	active := include
	if len(only) > 0 {
		active = only
	}
	if len(active) == 0 {
		return base
	}
	framework := map[string]bool{}
	var out, own []tools.Tool
	for _, t := range base {
		if t.IsFramework() {
			framework[t.Name] = true
			out = append(out, t)
		} else {
			own = append(own, t)
		}
	}
	var activated []tools.Tool
	names := map[string]bool{}
	for _, set := range x.order {
		if !active[set] {
			continue
		}
		for _, t := range x.sets[set] {
			if framework[t.Name] {
				x.warn(t.Name, set, "it has the name of a framework tool, which stays")
				continue
			}
			names[t.Name] = true
			activated = append(activated, t)
		}
	}
	if len(only) == 0 {
		// Include: the own tools stay, but an activated tool replaces a
		// same-name one.
		for _, t := range own {
			if !names[t.Name] {
				out = append(out, t)
			}
		}
	}
	return append(out, activated...)
}

// warn logs once per conversation handle that an activated tool is left
// out of the request.
func (x *activator) warn(tool, set, why string) {
	if _, done := x.warned.LoadOrStore(set+"\x00"+tool, true); done {
		return
	}
	x.logger.Warn("activated tool left out of the request: "+why, "tool", tool, "tool_set", set)
}

// mergeDelta adds the changes of d to into (made when nil) and returns it.
func mergeDelta(into, d map[string]*string) map[string]*string {
	if len(d) == 0 {
		return into
	}
	if into == nil {
		into = make(map[string]*string, len(d))
	}
	for k, v := range d {
		into[k] = v
	}
	return into
}
