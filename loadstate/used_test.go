package loadstate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

func TestNoteUsed(t *testing.T) {
	load := func(names ...string) []tools.Effect {
		var effs []tools.Effect
		for _, n := range names {
			effs = append(effs, tools.Effect{Kind: tools.EffectLoad, Skill: n})
		}
		return effs
	}
	var many []string
	for i := range loadstate.MaxUsed + 5 {
		many = append(many, fmt.Sprintf("s%d", i))
	}
	for _, tc := range []struct {
		name    string
		state   map[string]string
		effects []tools.Effect
		want    []string // nil: no change
	}{
		{"first use", nil, load("a"), []string{"a"}},
		{"latest first", map[string]string{loadstate.UsedKey("m"): `["a","b"]`}, load("b", "c"), []string{"c", "b", "a"}},
		{"same order: no change", map[string]string{loadstate.UsedKey("m"): `["a","b"]`}, load("a"), nil},
		{"malformed list started anew", map[string]string{loadstate.UsedKey("m"): `{`}, load("x"), []string{"x"}},
		{"no effects", nil, nil, nil},
		{"capped", nil, load(many...), slices.Collect(func(yield func(string) bool) {
			for i := len(many) - 1; i >= len(many)-loadstate.MaxUsed; i-- {
				if !yield(many[i]) {
					return
				}
			}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := map[string]string{}
			for k, v := range tc.state {
				state[k] = v
			}
			d := loadstate.NoteUsed(state, "m", tc.effects)
			if tc.want == nil {
				if d != nil {
					t.Fatalf("delta %v, want none", d)
				}
				return
			}
			session.ApplyDelta(state, d)
			got, err := loadstate.Used(state, "m")
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("used %v (%v), want %v", got, err, tc.want)
			}
		})
	}
	if _, err := loadstate.Used(map[string]string{loadstate.UsedKey("m"): "nope"}, "m"); err == nil {
		t.Error("a malformed list read without error")
	}
}
