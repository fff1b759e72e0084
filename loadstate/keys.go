package loadstate

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/skillkit/skillkit/session"
)

// The state keys, per agent, so that a sub-agent sharing the session does
// not load skills into its parent's prompt. Applications may read them (a
// callback that lists what is loaded, say); only this package writes or
// parses them. The "temp:" prefix marks them as load-lifetime state.
const (
	// Prefix starts every key of this package, per-agent or legacy.
	Prefix = "temp:skill:"
	// legacyLoadedPrefix and legacyDocsPrefix start the keys of the older
	// single-agent layout, still read and migrated.
	legacyLoadedPrefix = "temp:skill:loaded:"
	legacyDocsPrefix   = "temp:skill:docs:"

	loadedByAgentPrefix = "temp:skill:loaded_by_agent:"
	docsByAgentPrefix   = "temp:skill:docs_by_agent:"
	orderByAgentPrefix  = "temp:skill:loaded_order_by_agent:"

	// LoadedValue is the value of a loaded key; readers treat any
	// non-empty value as loaded.
	LoadedValue = "1"
	// DocsAll is the docs value meaning "every document of the skill";
	// otherwise the value is a JSON array of document paths.
	DocsAll = "*"
)

// LoadedKey is the key that marks skill name as loaded by agent:
// temp:skill:loaded_by_agent:<agent>/<name>.
func LoadedKey(agent, name string) string { return LoadedPrefix(agent) + name }

// DocsKey is the key holding the docs agent selected for skill name:
// temp:skill:docs_by_agent:<agent>/<name>. Its value is DocsAll or a JSON
// string array.
func DocsKey(agent, name string) string { return DocsPrefix(agent) + name }

// LoadedOrderKey is the key holding agent's loaded skill names as a JSON
// string array, least recently touched first:
// temp:skill:loaded_order_by_agent:<agent>.
func LoadedOrderKey(agent string) string { return orderByAgentPrefix + agent }

// LoadedPrefix starts every loaded key of agent.
func LoadedPrefix(agent string) string { return loadedByAgentPrefix + agent + "/" }

// DocsPrefix starts every docs key of agent.
func DocsPrefix(agent string) string { return docsByAgentPrefix + agent + "/" }

// legacyLoadedKey is the single-agent loaded key temp:skill:loaded:<name>.
func legacyLoadedKey(name string) string { return legacyLoadedPrefix + name }

// legacyDocsKey is the single-agent docs key temp:skill:docs:<name>.
func legacyDocsKey(name string) string { return legacyDocsPrefix + name }

// loadedSkills returns the names agent has loaded in state, sorted. Keys with
// an empty value, an empty name or a name containing "/" (which would belong
// to an agent whose name has a "/") are not loads.
func loadedSkills(state map[string]string, agent string) []string {
	prefix := LoadedPrefix(agent)
	var out []string
	for k, v := range state {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok || v == "" || !validKeyName(name) {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// encodeDocs encodes a docs selection: DocsAll when all is set, else a JSON
// array of the doc paths (an empty selection is "[]").
func encodeDocs(all bool, docs []string) string {
	if all {
		return DocsAll
	}
	if docs == nil {
		docs = []string{}
	}
	b, _ := json.Marshal(docs) // a []string always marshals.
	return string(b)
}

// decodeDocs decodes a docs value written by encodeDocs. key names the
// state key in the error.
func decodeDocs(key, value string) (all bool, docs []string, err error) {
	if value == DocsAll {
		return true, nil, nil
	}
	if err := json.Unmarshal([]byte(value), &docs); err != nil {
		return false, nil, fmt.Errorf("state key %q: value %q is neither %q nor a JSON string array: %w", key, value, DocsAll, err)
	}
	return false, docs, nil
}

// loadedOrder returns agent's loaded skill names from the order key, least
// recently touched first; nil when the key is absent.
func loadedOrder(state map[string]string, agent string) ([]string, error) {
	return names(state, LoadedOrderKey(agent))
}

// names decodes the JSON string array at key; nil when the key is absent
// or empty.
func names(state map[string]string, key string) ([]string, error) {
	v, ok := state[key]
	if !ok || v == "" {
		return nil, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(v), &names); err != nil {
		return nil, fmt.Errorf("state key %q: value is not a JSON string array: %w", key, err)
	}
	return names, nil
}

// encodeOrder encodes a loaded-order list for LoadedOrderKey.
func encodeOrder(names []string) string { return encodeDocs(false, names) }

// Migrate returns the state delta that moves legacy skill keys
// (temp:skill:loaded:<name>, temp:skill:docs:<name>) to agent's per-agent
// keys, or nil when there is nothing to migrate. Callers reading state for
// agent append it (in a KindState event or with their own event) so the
// legacy keys are rewritten once. Rules:
//   - a per-agent key that already exists wins; the legacy key is dropped;
//   - a legacy loaded key with an empty value only gets deleted;
//   - migrated names missing from agent's order list are put at its oldest
//     end, sorted, since legacy loads predate every per-agent one;
//   - legacy keys whose name contains "/" are left alone (no valid skill
//     name has one).
//
// An order value that is not a JSON array is an error naming the key.
func Migrate(state map[string]string, agent string) (map[string]*string, error) {
	delta := map[string]*string{}
	var migrated []string
	for k, v := range state {
		if name, ok := strings.CutPrefix(k, legacyLoadedPrefix); ok && validKeyName(name) {
			delta[k] = nil
			if _, exists := state[LoadedKey(agent, name)]; !exists && v != "" {
				delta[LoadedKey(agent, name)] = session.Ptr(v)
				migrated = append(migrated, name)
			}
			continue
		}
		if name, ok := strings.CutPrefix(k, legacyDocsPrefix); ok && validKeyName(name) {
			delta[k] = nil
			if _, exists := state[DocsKey(agent, name)]; !exists {
				delta[DocsKey(agent, name)] = session.Ptr(v)
			}
		}
	}
	if len(delta) == 0 {
		return nil, nil
	}
	if len(migrated) > 0 {
		order, err := loadedOrder(state, agent)
		if err != nil {
			return nil, fmt.Errorf("migrate legacy skill keys for agent %q: %w", agent, err)
		}
		sort.Strings(migrated)
		var front []string
		for _, name := range migrated {
			if !slices.Contains(order, name) {
				front = append(front, name)
			}
		}
		if len(front) > 0 {
			delta[LoadedOrderKey(agent)] = session.Ptr(encodeOrder(append(front, order...)))
		}
	}
	return delta, nil
}

// validKeyName reports whether name can be the skill part of a key.
func validKeyName(name string) bool {
	return strings.TrimSpace(name) != "" && !strings.Contains(name, "/")
}
