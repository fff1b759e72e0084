package assembly_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// TestCatalogEvent walks one agent through a catalog's life: first
// publication, unchanged (nil), a changed set (replacement appended), an
// emptied set (tombstone), and an agent without the skill tool (nothing).
func TestCatalogEvent(t *testing.T) {
	ctx := context.Background()
	full := newSnapshot(t, skillFiles)
	without := func(names ...string) *registry.Snapshot {
		return full.View(ctx, func(_ context.Context, s skill.Summary) bool {
			for _, n := range names {
				if s.Name == n {
					return false
				}
			}
			return true
		})
	}
	all, err := tools.Select(nil)
	if err != nil {
		t.Fatal(err)
	}
	noSkillTool, err := tools.Select([]string{tools.LoadName})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []assembly.CatalogFormat{assembly.FormatReminder, assembly.FormatList} {
		t.Run(format.String(), func(t *testing.T) {
			store := session.NewMemoryStore(nil)
			s, err := store.Create(ctx, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				name  string
				snap  *registry.Snapshot
				tools []tools.Tool
				want  []string // substrings; nil means no event
				not   []string
			}{
				{"first", full, all, []string{"alpha", "gamma"}, []string{"changed"}},
				{"unchanged", full, all, nil, nil},
				{"changed", without("gamma"), all, []string{"alpha", "delta"}, []string{"gamma"}},
				{"unchanged again", without("gamma"), all, nil, nil},
				{"emptied", without("alpha", "beta", "gamma", "delta"), all, []string{""}, []string{"alpha"}},
				{"still empty", without("alpha", "beta", "gamma", "delta"), all, nil, nil},
			}
			if format == assembly.FormatList {
				steps[2].want = append(steps[2].want, "The available skills changed. This complete list replaces every earlier one:\n")
				steps[4].want = []string{"No skills are available any more"}
			}
			var texts []string
			for _, st := range steps {
				cur, err := store.Get(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				ev, err := assembly.CatalogEvent(cur.State, "main", st.snap, st.tools, &assembly.CatalogOptions{Format: format})
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				if st.want == nil {
					if ev != nil {
						t.Fatalf("%s: got an event %q, want none", st.name, ev.Text)
					}
					continue
				}
				if ev == nil {
					t.Fatalf("%s: no event", st.name)
				}
				if ev.Kind != session.KindContext || ev.Agent != "main" {
					t.Fatalf("%s: event kind %q agent %q", st.name, ev.Kind, ev.Agent)
				}
				for _, w := range st.want {
					if !strings.Contains(ev.Text, w) {
						t.Errorf("%s: text lacks %q:\n%s", st.name, w, ev.Text)
					}
				}
				for _, w := range st.not {
					if strings.Contains(ev.Text, w) {
						t.Errorf("%s: text contains %q:\n%s", st.name, w, ev.Text)
					}
				}
				if _, err := store.Append(ctx, s.ID, *ev); err != nil {
					t.Fatal(err)
				}
				texts = append(texts, ev.Text)
			}
			// Replacements are appended: every earlier catalog stays as sent.
			final, err := store.Get(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(final.Events) != 3 {
				t.Fatalf("%d events, want first, replacement, tombstone", len(final.Events))
			}
			for i, ev := range final.Events {
				if ev.Text != texts[i] {
					t.Errorf("event %d changed after publication", i)
				}
			}
			golden(t, "catalog_"+format.String()+".txt", []byte(strings.Join(texts, "\n=====\n")+"\n"))
		})
	}
	t.Run("no skill tool", func(t *testing.T) {
		s := map[string]string{}
		ev, err := assembly.CatalogEvent(s, "main", full, noSkillTool, nil)
		if err != nil || ev != nil {
			t.Fatalf("event %v, err %v; want nothing for an agent without the skill tool", ev, err)
		}
		// The list format names skill_load, so that agent gets it.
		ev, err = assembly.CatalogEvent(s, "main", full, noSkillTool, &assembly.CatalogOptions{Format: assembly.FormatList})
		if err != nil || ev == nil {
			t.Fatalf("list format with skill_load: event %v, err %v", ev, err)
		}
	})
	t.Run("nil snapshot", func(t *testing.T) {
		ev, err := assembly.CatalogEvent(map[string]string{}, "main", nil, all, nil)
		if err != nil || ev != nil {
			t.Fatalf("event %v, err %v; want nothing", ev, err)
		}
	})
	t.Run("bad format", func(t *testing.T) {
		_, err := assembly.CatalogEvent(map[string]string{}, "main", full, all, &assembly.CatalogOptions{Format: 9})
		if err == nil || !strings.Contains(err.Error(), `CatalogOptions.Format 9 is not one of FormatReminder, FormatList`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("per agent", func(t *testing.T) {
		s := map[string]string{assembly.CatalogStateKey("main"): "x"}
		ev, err := assembly.CatalogEvent(s, "helper", full, all, nil)
		if err != nil || ev == nil || strings.Contains(ev.Text, "changed") {
			t.Fatalf("helper's first catalog: event %v, err %v", ev, err)
		}
	})
}
