package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// State keys written by the skill tools. They are per agent, so a sub-agent
// sharing the session does not load skills into its parent's prompt. The
// "temp:" prefix marks them as load-lifetime state that the runner clears
// (turn / once modes); keys without it persist.
const (
	// SkillStatePrefix starts every skill state key, per-agent or legacy.
	SkillStatePrefix = "temp:skill:"
	// LegacyLoadedPrefix starts the pre-per-agent loaded keys.
	LegacyLoadedPrefix = "temp:skill:loaded:"
	// LegacyDocsPrefix starts the pre-per-agent docs keys.
	LegacyDocsPrefix = "temp:skill:docs:"

	loadedByAgentPrefix = "temp:skill:loaded_by_agent:"
	docsByAgentPrefix   = "temp:skill:docs_by_agent:"
	orderByAgentPrefix  = "temp:skill:loaded_order_by_agent:"

	// LoadedValue is the value of a loaded key.
	LoadedValue = "1"
	// DocsAll is the docs value meaning "every doc of the skill".
	DocsAll = "*"
)

// LoadedKey is the key that marks skill name as loaded by agent:
// temp:skill:loaded_by_agent:<agent>/<name>.
func LoadedKey(agent, name string) string { return LoadedPrefix(agent) + name }

// DocsKey is the key holding the docs agent selected for skill name:
// temp:skill:docs_by_agent:<agent>/<name>. Its value is DocsAll or a JSON
// string array (see EncodeDocs).
func DocsKey(agent, name string) string { return DocsPrefix(agent) + name }

// LoadedOrderKey is the key holding agent's loaded skill names as a JSON
// string array, least recently touched first:
// temp:skill:loaded_order_by_agent:<agent>.
func LoadedOrderKey(agent string) string { return orderByAgentPrefix + agent }

// LoadedPrefix starts every loaded key of agent.
func LoadedPrefix(agent string) string { return loadedByAgentPrefix + agent + "/" }

// DocsPrefix starts every docs key of agent.
func DocsPrefix(agent string) string { return docsByAgentPrefix + agent + "/" }

// LegacyLoadedKey is the pre-per-agent loaded key temp:skill:loaded:<name>.
func LegacyLoadedKey(name string) string { return LegacyLoadedPrefix + name }

// LegacyDocsKey is the pre-per-agent docs key temp:skill:docs:<name>.
func LegacyDocsKey(name string) string { return LegacyDocsPrefix + name }

// LoadedSkills returns the names agent has loaded in state, sorted. Keys with
// an empty value, an empty name or a name containing "/" (which would belong
// to an agent whose name has a "/") are not loads.
func LoadedSkills(state map[string]string, agent string) []string {
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

// EncodeDocs encodes a docs selection: DocsAll when all is set, else a JSON
// array of the doc paths (an empty selection is "[]").
func EncodeDocs(all bool, docs []string) string {
	if all {
		return DocsAll
	}
	if docs == nil {
		docs = []string{}
	}
	b, _ := json.Marshal(docs) // a []string always marshals.
	return string(b)
}

// DecodeDocs decodes a docs value written by EncodeDocs. key names the state
// key in the error.
func DecodeDocs(key, value string) (all bool, docs []string, err error) {
	if value == DocsAll {
		return true, nil, nil
	}
	if err := json.Unmarshal([]byte(value), &docs); err != nil {
		return false, nil, fmt.Errorf("state key %q: value %q is neither %q nor a JSON string array: %w", key, value, DocsAll, err)
	}
	return false, docs, nil
}

// LoadedOrder returns agent's loaded skill names from the order key, least
// recently touched first; nil when the key is absent.
func LoadedOrder(state map[string]string, agent string) ([]string, error) {
	key := LoadedOrderKey(agent)
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

// EncodeOrder encodes a loaded-order list for LoadedOrderKey.
func EncodeOrder(names []string) string { return EncodeDocs(false, names) }

// MigrateLegacyKeys returns the state delta that moves legacy skill keys
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
func MigrateLegacyKeys(state map[string]string, agent string) (map[string]*string, error) {
	delta := map[string]*string{}
	var migrated []string
	for k, v := range state {
		if name, ok := strings.CutPrefix(k, LegacyLoadedPrefix); ok && validKeyName(name) {
			delta[k] = nil
			if _, exists := state[LoadedKey(agent, name)]; !exists && v != "" {
				delta[LoadedKey(agent, name)] = Ptr(v)
				migrated = append(migrated, name)
			}
			continue
		}
		if name, ok := strings.CutPrefix(k, LegacyDocsPrefix); ok && validKeyName(name) {
			delta[k] = nil
			if _, exists := state[DocsKey(agent, name)]; !exists {
				delta[DocsKey(agent, name)] = Ptr(v)
			}
		}
	}
	if len(delta) == 0 {
		return nil, nil
	}
	if len(migrated) > 0 {
		order, err := LoadedOrder(state, agent)
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
			delta[LoadedOrderKey(agent)] = Ptr(EncodeOrder(append(front, order...)))
		}
	}
	return delta, nil
}

// validKeyName reports whether name can be the skill part of a key.
func validKeyName(name string) bool {
	return strings.TrimSpace(name) != "" && !strings.Contains(name, "/")
}
