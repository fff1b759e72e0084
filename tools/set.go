package tools

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnknownTool is wrapped by Select's error for a name that is neither a
// built-in tool nor one of the extra tools.
var ErrUnknownTool = errors.New("unknown tool")

// DefaultNames returns the tool list an agent exposes when its
// configuration names none: the skill tool and the progressive-disclosure
// tools, in that order. The execution tool (workspace_exec) is never on by
// default; a configuration that wants it names it. Each call returns a
// fresh slice.
func DefaultNames() []string {
	return []string{SkillName, LoadName, SelectDocsName, ListDocsName, ReadName}
}

// Select returns the tools named, in the order given. An empty list means
// DefaultNames. An unknown or repeated name is an error naming it; nothing
// is silently dropped or added. extra supplies tools built elsewhere (such
// as workspace_exec, which needs a workspace and a sandbox) by name; an
// extra tool must have a name and a handler, and may not take the name of
// a built-in tool or of another extra tool (a built-in never loses
// silently).
func Select(names []string, extra ...Tool) ([]Tool, error) {
	if len(names) == 0 {
		names = DefaultNames()
	}
	known := builtins()
	for i, t := range extra {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("tools: extra tool %d has no name; set Tool.Name", i)
		case t.Handler == nil:
			return nil, fmt.Errorf("tools: extra tool %q has no handler; set Tool.Handler", t.Name)
		case isBuiltin(t.Name):
			return nil, fmt.Errorf("tools: extra tool %q has the name of a built-in tool; give it another name", t.Name)
		case known[t.Name] != nil:
			return nil, fmt.Errorf("tools: extra tool %q is given twice; pass each tool once", t.Name)
		}
		known[t.Name] = func() Tool { return t }
	}
	seen := make(map[string]bool, len(names))
	out := make([]Tool, 0, len(names))
	for _, n := range names {
		mk, ok := known[n]
		if !ok {
			avail := make([]string, 0, len(known))
			for k := range known {
				avail = append(avail, k)
			}
			slices.Sort(avail)
			return nil, fmt.Errorf("tools: %w %q; available: %s", ErrUnknownTool, n, strings.Join(avail, ", "))
		}
		if seen[n] {
			return nil, fmt.Errorf("tools: tool %q is listed twice; list each tool once", n)
		}
		seen[n] = true
		out = append(out, mk())
	}
	return out, nil
}

// builtins maps the names of the skill tools to their constructors.
func builtins() map[string]func() Tool {
	return map[string]func() Tool{
		SkillName: Skill, LoadName: Load, SelectDocsName: SelectDocs, ListDocsName: ListDocs, ReadName: Read,
	}
}

// isBuiltin reports whether name is one of this package's tools.
func isBuiltin(name string) bool { return slices.Contains(DefaultNames(), name) }

// IsSkillToolName reports whether name is one of DefaultNames or
// ExecToolNames (workspace_exec and its companions): the names of the
// skill tools, which no other tool of an agent may take.
func IsSkillToolName(name string) bool {
	return isBuiltin(name) || slices.Contains(ExecToolNames(), name)
}

// Defaults returns the tools an agent offers when it names none: the
// skill tool and the progressive-disclosure tools, in DefaultNames order.
func Defaults() []Tool {
	mk := builtins()
	out := make([]Tool, 0, len(mk))
	for _, n := range DefaultNames() {
		out = append(out, mk[n]())
	}
	return out
}

// ToolSet is a named group of tools offered together, such as the file
// tools over one folder. Its tools reach the model as Expand names them,
// "<set>_<tool>", so two sets of the same kind (file tools over two
// folders) never collide; the set's Name is how configuration refers to
// it (tool activation, say).
type ToolSet struct {
	// Name names the set: 1 to 64 letters, digits, '_' or '-', like a
	// tool name.
	Name string
	// Tools are the set's tools under their own names.
	Tools []Tool
}

// Expand returns the set's tools as the model sees them: copies named
// "<set>_<tool>", in order, checked as Check checks a request's tools
// (names valid and distinct, handlers set). The error names the set.
func (s ToolSet) Expand() ([]Tool, error) {
	if !validName(s.Name) {
		return nil, fmt.Errorf("tools: tool set %q: name it with 1 to 64 letters, digits, '_' or '-'", s.Name)
	}
	out := make([]Tool, len(s.Tools))
	for i, t := range s.Tools {
		t.Name = s.Name + "_" + t.Name
		out[i] = t
	}
	if err := Check(out); err != nil {
		return nil, fmt.Errorf("tools: tool set %q: %w", s.Name, err)
	}
	return out, nil
}
