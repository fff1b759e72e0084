package assembly_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/workspace"
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
				ev, err := assembly.CatalogEvent(context.Background(), cur.State, "main", st.snap, st.tools, &assembly.CatalogOptions{Format: format})
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
		ev, err := assembly.CatalogEvent(context.Background(), s, "main", full, noSkillTool, nil)
		if err != nil || ev != nil {
			t.Fatalf("event %v, err %v; want nothing for an agent without the skill tool", ev, err)
		}
		// The list format names skill_load, so that agent gets it.
		ev, err = assembly.CatalogEvent(context.Background(), s, "main", full, noSkillTool, &assembly.CatalogOptions{Format: assembly.FormatList})
		if err != nil || ev == nil {
			t.Fatalf("list format with skill_load: event %v, err %v", ev, err)
		}
	})
	t.Run("nil snapshot", func(t *testing.T) {
		ev, err := assembly.CatalogEvent(context.Background(), map[string]string{}, "main", nil, all, nil)
		if err != nil || ev != nil {
			t.Fatalf("event %v, err %v; want nothing", ev, err)
		}
	})
	t.Run("bad format", func(t *testing.T) {
		_, err := assembly.CatalogEvent(context.Background(), map[string]string{}, "main", full, all, &assembly.CatalogOptions{Format: 9})
		if err == nil || !strings.Contains(err.Error(), `CatalogOptions.Format 9 is not one of FormatReminder, FormatList`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("per agent", func(t *testing.T) {
		s := map[string]string{assembly.CatalogStateKey("main"): "x"}
		ev, err := assembly.CatalogEvent(context.Background(), s, "helper", full, all, nil)
		if err != nil || ev == nil || strings.Contains(ev.Text, "changed") {
			t.Fatalf("helper's first catalog: event %v, err %v", ev, err)
		}
	})
}

// TestCatalogRenderAndGuidance: a custom renderer and the tooling
// guidance shape the published text; a change of either appends a
// replacement; bad guidance options are errors naming the field.
func TestCatalogRenderAndGuidance(t *testing.T) {
	ctx := context.Background()
	full := newSnapshot(t, skillFiles)
	withExec := append(mustSelect(t, nil), tools.Tool{Name: "custom", Handler: func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{}, nil }})
	loadOnly := mustSelect(t, []string{tools.LoadName})
	short := func(_ context.Context, skills []skill.Summary) string {
		var names []string
		for _, s := range skills {
			names = append(names, s.Name)
		}
		return "Use only: " + strings.Join(names, ", ")
	}
	type userKey struct{}
	perUser := func(ctx context.Context, skills []skill.Summary) string {
		if ctx.Value(userKey{}) == nil {
			return "  \n"
		}
		return "Available skills:\n- " + skills[0].Name
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts assembly.CatalogOptions
		tool []tools.Tool
		want string // the whole text; "" for no event
	}{
		{"renderer in the list format gets the header", ctx, assembly.CatalogOptions{Format: assembly.FormatList, Render: short, Guidance: assembly.Guidance{Mode: assembly.GuidanceNone}}, loadOnly,
			"Available skills:\nUse only: alpha, beta, delta, gamma"},
		{"renderer in the reminder format is taken as is", ctx, assembly.CatalogOptions{Render: short}, withExec,
			"Use only: alpha, beta, delta, gamma"},
		{"blank renderer publishes nothing", ctx, assembly.CatalogOptions{Format: assembly.FormatList, Render: perUser}, loadOnly, ""},
		{"renderer reads the request's context", context.WithValue(ctx, userKey{}, "u"), assembly.CatalogOptions{Format: assembly.FormatList, Render: perUser, Guidance: assembly.Guidance{Mode: assembly.GuidanceNone}}, loadOnly,
			"Available skills:\n- alpha"},
		{"default guidance names the tools offered, under their names", ctx, assembly.CatalogOptions{Format: assembly.FormatList, Render: short}, loadOnly,
			"Available skills:\nUse only: alpha, beta, delta, gamma\n\nTooling and workspace guidance:\n- Call skill_load with a skill's name to load its instructions before following them; they stay in the context while the skill is loaded."},
		{"replaced guidance", ctx, assembly.CatalogOptions{Render: short, Guidance: assembly.Guidance{Mode: assembly.GuidanceReplace, Text: "Load skills first."}}, withExec,
			"Use only: alpha, beta, delta, gamma\n\nLoad skills first."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := assembly.CatalogEvent(tc.ctx, map[string]string{}, "main", full, tc.tool, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && ev != nil:
				t.Fatalf("published %q; want nothing", ev.Text)
			case tc.want != "" && (ev == nil || ev.Text != tc.want):
				t.Fatalf("published %+v; want %q", ev, tc.want)
			}
		})
	}
	t.Run("exec line and its override", func(t *testing.T) {
		exec := renamedExec(t, "run_it")
		ev, err := assembly.CatalogEvent(ctx, map[string]string{}, "main", full, append(loadOnly, exec), &assembly.CatalogOptions{Format: assembly.FormatList})
		if err != nil || !strings.Contains(ev.Text, "- run_it runs a shell command in this session's workspace") {
			t.Fatalf("%v %+v", err, ev)
		}
		ev, err = assembly.CatalogEvent(ctx, map[string]string{}, "main", full, append(loadOnly, exec), &assembly.CatalogOptions{Format: assembly.FormatList,
			Guidance: assembly.Guidance{Exec: "- run_it only for the release checklist."}})
		if err != nil || !strings.HasSuffix(ev.Text, "\n- run_it only for the release checklist.") || strings.Contains(ev.Text, "shell command") {
			t.Fatalf("%v %+v", err, ev)
		}
	})
	t.Run("background companions", func(t *testing.T) {
		ev, err := assembly.CatalogEvent(ctx, map[string]string{}, "main", full, append(loadOnly, execTools(t)...), &assembly.CatalogOptions{Format: assembly.FormatList})
		if err != nil || !strings.HasSuffix(ev.Text, "returns a handle; workspace_exec_read reads its new output, workspace_exec_write writes to its input, workspace_exec_kill stops it.") {
			t.Fatalf("%v %+v", err, ev)
		}
	})
	t.Run("a guidance change appends a replacement", func(t *testing.T) {
		state := map[string]string{}
		o := assembly.CatalogOptions{Format: assembly.FormatList}
		ev, err := assembly.CatalogEvent(ctx, state, "main", full, loadOnly, &o)
		if err != nil || ev == nil {
			t.Fatal(err)
		}
		session.ApplyDelta(state, ev.StateDelta)
		if ev, _ := assembly.CatalogEvent(ctx, state, "main", full, loadOnly, &o); ev != nil {
			t.Fatalf("unchanged catalog published again: %q", ev.Text)
		}
		o.Guidance = assembly.Guidance{Mode: assembly.GuidanceReplace, Text: "New words."}
		ev, err = assembly.CatalogEvent(ctx, state, "main", full, loadOnly, &o)
		if err != nil || ev == nil || !strings.HasPrefix(ev.Text, "The available skills changed.") || !strings.HasSuffix(ev.Text, "\n\nNew words.") {
			t.Fatalf("%v %+v", err, ev)
		}
	})
	for _, tc := range []struct {
		g    assembly.Guidance
		want string
	}{
		{assembly.Guidance{Mode: 5}, "CatalogOptions.Guidance.Mode 5"},
		{assembly.Guidance{Mode: assembly.GuidanceReplace}, "CatalogOptions.Guidance.Text is empty with GuidanceReplace"},
		{assembly.Guidance{Text: "x"}, "Guidance.Text is set but Guidance.Mode is not GuidanceReplace"},
		{assembly.Guidance{Mode: assembly.GuidanceNone, Exec: "x"}, "Guidance.Exec is set but Guidance.Mode is not GuidanceDefault"},
	} {
		_, err := assembly.CatalogEvent(ctx, map[string]string{}, "main", full, loadOnly, &assembly.CatalogOptions{Guidance: tc.g})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("guidance %+v: %v; want %q", tc.g, err, tc.want)
		}
	}
}

func mustSelect(t *testing.T, names []string) []tools.Tool {
	t.Helper()
	ts, err := tools.Select(names)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// renamedExec is a real workspace_exec tool offered under another name.
func renamedExec(t *testing.T, name string) tools.Tool {
	t.Helper()
	tl := execTools(t)[0]
	tl.Name = name
	return tl
}

// execTools are the real workspace_exec tools (workspace_exec and its
// companions) over the unconfined runner and temporary workspaces.
func execTools(t *testing.T) []tools.Tool {
	t.Helper()
	r, err := sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	wm, err := workspace.NewTemp(t.Context(), &workspace.Options{PlainDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wm.Discard(context.Background()) })
	et, err := tools.WorkspaceExecTools(tools.WorkspaceExecConfig{Runner: r, Workspaces: wm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = et.Close() })
	return et.Tools()
}
