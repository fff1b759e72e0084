package tools

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultNames is the tool list an agent exposes when its configuration
// names none: the skill tool and the progressive-disclosure tools. The
// execution tool (workspace_exec) is never on by default; a configuration
// that wants it names it.
var DefaultNames = []string{SkillName, LoadName, SelectDocsName, ListDocsName, ReadName}

// Select returns the tools named, in the order given. An empty list means
// DefaultNames. An unknown or repeated name is an error naming it; nothing
// is silently dropped or added. extra supplies tools built elsewhere (such
// as workspace_exec, which needs a workspace and a sandbox) by name.
func Select(names []string, extra ...Tool) ([]Tool, error) {
	if len(names) == 0 {
		names = DefaultNames
	}
	known := map[string]func() Tool{
		SkillName: Skill, LoadName: Load, SelectDocsName: SelectDocs, ListDocsName: ListDocs, ReadName: Read,
	}
	for _, t := range extra {
		t := t
		known[t.Name] = func() Tool { return t }
	}
	seen := map[string]bool{}
	out := make([]Tool, 0, len(names))
	for _, n := range names {
		mk, ok := known[n]
		if !ok {
			avail := make([]string, 0, len(known))
			for k := range known {
				avail = append(avail, k)
			}
			return nil, fmt.Errorf("tools: unknown tool %q; available: %s", n, strings.Join(slices.Sorted(slices.Values(avail)), ", "))
		}
		if seen[n] {
			return nil, fmt.Errorf("tools: tool %q is listed twice", n)
		}
		seen[n] = true
		out = append(out, mk())
	}
	return out, nil
}
