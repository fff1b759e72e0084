package loadstate

import (
	"encoding/json"
	"slices"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// MaxUsed bounds the names UsedKey keeps: enough to order what a catalog
// budget leaves out, small enough for the delta of every load.
const MaxUsed = 64

// usedPrefix starts UsedKey. It is not a "temp:" key: use outlives every
// load lifetime.
const usedPrefix = "skillkit:skills_used:"

// UsedKey is the key holding the skills agent loaded, most recently used
// first (at most MaxUsed), as a JSON string array:
// skillkit:skills_used:<agent>. A catalog over its budget leaves out the
// skills used least recently first.
func UsedKey(agent string) string { return usedPrefix + agent }

// Used returns agent's skills most recently used first; nil when none
// was. A value that is not a JSON string array is an error naming the key.
func Used(state map[string]string, agent string) ([]string, error) {
	return names(state, UsedKey(agent))
}

// NoteUsed returns the state change that puts the skills of effects at
// the front of agent's used list (the last effect first), or nil when
// the list stays as it is. A malformed list is started anew. The
// conversation records it with every load, beside Apply's delta.
func NoteUsed(state map[string]string, agent string, effects []tools.Effect) map[string]*string {
	old, err := Used(state, agent)
	if err != nil {
		old = nil
	}
	var used []string
	for i := len(effects) - 1; i >= 0; i-- {
		if n := effects[i].Skill; n != "" && !slices.Contains(used, n) {
			used = append(used, n)
		}
	}
	if len(used) == 0 {
		return nil
	}
	for _, n := range old {
		if !slices.Contains(used, n) {
			used = append(used, n)
		}
	}
	used = used[:min(len(used), MaxUsed)]
	if slices.Equal(used, old) {
		return nil
	}
	b, _ := json.Marshal(used)
	return map[string]*string{UsedKey(agent): session.Ptr(string(b))}
}
