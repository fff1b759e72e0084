package skillkit_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/workspace"
)

// skills writes two skills into a new folder and returns it.
func skills(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, desc := range map[string]string{"alpha": "Does the first thing.", "beta": "Does the second thing."} {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		md := "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func newKit(t *testing.T, o skillkit.Options) *skillkit.Kit {
	t.Helper()
	k, err := skillkit.New(t.Context(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	return k
}

func unconfined(t *testing.T, max time.Duration) sandbox.Runner {
	t.Helper()
	r, err := sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{MaxTimeout: max, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewChecksEveryOption(t *testing.T) {
	root := skills(t)
	named := tools.New("alpha_tool", "", func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.Result{}, nil })
	for _, tc := range []struct {
		name string
		o    skillkit.Options
		want string
	}{
		{"missing root", skillkit.Options{Roots: []string{filepath.Join(root, "nope")}}, "skillkit: Options.Roots[0]: "},
		{"source without files", skillkit.Options{Roots: []string{root}, Sources: []source.Source{{Label: "x"}}}, `Options.Sources[0] ("x") has no file system`},
		{"lifetime", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{Lifetime: 9}}, "skillkit: Options.Agent.Lifetime 9 is not one of"},
		{"placement of a named agent", skillkit.Options{Roots: []string{root}, Agents: map[string]skillkit.AgentOptions{"helper": {Placement: 4}}},
			`skillkit: Options.Agents["helper"].Placement 4 is not one of`},
		{"negative cap", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{MaxLoaded: -1}}, "Options.Agent.MaxLoaded is -1"},
		{"catalog cap", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{Catalog: assembly.CatalogOptions{DescriptionMaxLength: 1}}}, "Options.Agent.Catalog.DescriptionMaxLength"},
		{"unnamed agent", skillkit.Options{Roots: []string{root}, Agents: map[string]skillkit.AgentOptions{"": {}}}, "Options.Agents has an empty agent name"},
		{"agent name with a slash", skillkit.Options{Roots: []string{root}, Agents: map[string]skillkit.AgentOptions{"a/b": {}}},
			`skillkit: Options.Agents["a/b"]: the agent name "a/b" has a '/'`},
		{"tool with a skill tool's name", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{Tools: []tools.Tool{tools.Skill()}}},
			`skillkit: Options.Agent.Tools[0] is named "skill", like a skill tool`},
		{"empty root", skillkit.Options{Roots: []string{""}}, `Options.Roots[0] is empty`},
		{"bad tool name", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{Tools: []tools.Tool{{Name: "a b", Handler: named.Handler}}}},
			`Options.Agent.Tools: tools: tool 0 is named "a b"`},
		{"tool twice", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{Tools: []tools.Tool{named, named}}}, `two tools are named "alpha_tool"`},
		{"runner and isolated options", skillkit.Options{Roots: []string{root}, Exec: &skillkit.ExecOptions{Runner: unconfined(t, 0), Isolated: &sandbox.IsolatedOptions{}}},
			"Options.Exec sets both Runner and Isolated"},
		{"timeout above the runner's", skillkit.Options{Roots: []string{root}, Exec: &skillkit.ExecOptions{Runner: unconfined(t, time.Minute), Tool: &tools.ExecOptions{MaxTimeout: time.Hour}}},
			"ExecOptions.MaxTimeout 1h0m0s exceeds the runner's own maximum 1m0s"},
		{"workspace_exec named without Exec", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{SkillTools: []string{tools.LoadName, tools.WorkspaceExecName}}},
			"skillkit: Options.Agent.SkillTools names workspace_exec, but Options.Exec is not set"},
		{"a companion named without Exec", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{SkillTools: []string{tools.LoadName, tools.WorkspaceExecKillName}}},
			"skillkit: Options.Agent.SkillTools names workspace_exec_kill, but Options.Exec is not set"},
		{"background wall time above the runner's", skillkit.Options{Roots: []string{root}, Exec: &skillkit.ExecOptions{Runner: unconfined(t, 0),
			Tool: &tools.ExecOptions{Background: tools.BackgroundOptions{MaxWallTime: 1000 * time.Hour}}}},
			"ExecOptions.Background.MaxWallTime 1000h0m0s exceeds the runner's MaxStartTimeout 1h0m0s"},
		{"unknown skill tool", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{SkillTools: []string{"skill_lod"}}},
			`skillkit: Options.Agent.SkillTools: tools: unknown tool "skill_lod"; available:`},
		{"empty skill tools", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{SkillTools: []string{}}},
			"Options.Agent.SkillTools is empty; leave it nil"},
		{"guidance text without its mode", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{Catalog: assembly.CatalogOptions{Guidance: assembly.Guidance{Text: "x"}}}},
			"skillkit: Options.Agent.Catalog.Guidance.Text is set but Guidance.Mode is not GuidanceReplace"},
		{"exec guidance in the reminder format", skillkit.Options{Roots: []string{root}, Agent: skillkit.AgentOptions{Catalog: assembly.CatalogOptions{Guidance: assembly.Guidance{Exec: "- x"}}}},
			"Options.Agent.Catalog.Guidance.Exec is set, but only the list format"},
		{"activation of an unknown set", skillkit.Options{Roots: []string{root}, Agents: map[string]skillkit.AgentOptions{"helper": {
			Activation: &skillkit.Activation{Rules: []skillkit.ActivationRule{{Skill: "alpha", Sets: []string{"files"}}}}}}},
			`skillkit: Options.Agents["helper"].Activation.Rules[0].Sets[0] names "files", which is not in Activation.Sets`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := skillkit.New(t.Context(), &tc.o)
			if err == nil {
				k.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	project := t.TempDir()
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(project, ".agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(skills(t), filepath.Join(project, ".agents", "skills")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SKILLKIT_PATH", filepath.Join(project, "not-there"))
	k, err := skillkit.New(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if n := k.Skills(t.Context()).Len(); n != 2 {
		t.Errorf("the default roots hold %d skills, want the project's 2", n)
	}
	if w := k.Warnings(); len(w) != 1 || !strings.Contains(w[0], "not-there") {
		t.Errorf("warnings %q, want the missing $SKILLKIT_PATH entry", w)
	}
	ts, err := k.Tools(t.Context(), "anyone")
	if err != nil || len(ts) != len(tools.DefaultNames()) {
		t.Errorf("default tools: %d, %v", len(ts), err)
	}
	cat, err := k.Catalog(t.Context(), "anyone")
	if err != nil || !strings.HasPrefix(cat, "<system-reminder>") || !strings.Contains(cat, "- `alpha`: Does the first thing.") {
		t.Errorf("catalog %q, %v", cat, err)
	}
	// The kit's own store goes with it.
	store := k.Store()
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.List(t.Context()); !errors.Is(err, session.ErrClosed) {
		t.Errorf("the kit's memory store is still open after Close: %v", err)
	}
}

func TestOpenCreatesOrResumes(t *testing.T) {
	store := session.NewMemoryStore(nil)
	defer store.Close()
	k := newKit(t, skillkit.Options{Roots: []string{skills(t)}, Store: store,
		Agent:  skillkit.AgentOptions{System: "You help."},
		Agents: map[string]skillkit.AgentOptions{"helper": {System: "You check.", Lifetime: loadstate.Session}}})
	a, err := k.Open(t.Context(), "", "assistant")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.User(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	again, err := k.Open(t.Context(), a.ID(), "assistant")
	if err != nil {
		t.Fatal(err)
	}
	req, err := again.Request(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if req.Messages[0].Content != "You help." || req.Messages[len(req.Messages)-1].Content != "hello" {
		t.Errorf("resumed session: %s", req.Text())
	}
	named, err := k.Open(t.Context(), "chosen-id", "helper")
	if err != nil || named.ID() != "chosen-id" {
		t.Fatalf("Open with a new ID: %v", err)
	}
	req, err = named.Request(t.Context())
	if err != nil || req.Messages[0].Content != "You check." {
		t.Errorf("helper's request %v: %v", req, err)
	}
	// The caller's store stays open after Close.
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.List(t.Context()); err != nil {
		t.Errorf("the caller's store was closed: %v", err)
	}
}

// A filter hides a skill from catalogs, tools and requests alike.
func TestFilters(t *testing.T) {
	hideBeta := func(_ context.Context, s skill.Summary) bool { return s.Name != "beta" }
	k := newKit(t, skillkit.Options{Roots: []string{skills(t)}, Filters: []registry.Filter{hideBeta}})
	cat, err := k.Catalog(t.Context(), "a")
	if err != nil || !strings.Contains(cat, "`alpha`") || strings.Contains(cat, "beta") {
		t.Errorf("catalog %q, %v", cat, err)
	}
	c, err := k.Open(t.Context(), "", "a")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(t.Context(), "skill", []byte(`{"name":"beta"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "unknown or no longer available") {
		t.Errorf("skill beta through the filter: %+v, %v", res, err)
	}
}

// workspace_exec runs in the workspace of the call's session: one
// session's files are not another's.
func TestExecWorkspacePerSession(t *testing.T) {
	wm, err := workspace.NewTemp(t.Context(), &workspace.Options{PlainDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wm.Discard(context.Background())
	k := newKit(t, skillkit.Options{Roots: []string{skills(t)}, Exec: &skillkit.ExecOptions{Runner: unconfined(t, 0), Workspaces: wm}})
	ts, err := k.Tools(t.Context(), "a")
	if err != nil || len(ts) != len(tools.DefaultNames())+4 || ts[len(ts)-4].Name != tools.WorkspaceExecName {
		t.Fatalf("tools %d, %v; want the skill tools, workspace_exec and its companions", len(ts), err)
	}
	for i, name := range tools.ExecToolNames() {
		if tl := ts[len(tools.DefaultNames())+i]; tl.Name != name || tl.Builtin() != name || !tl.IsFramework() {
			t.Errorf("tool %d is %q (builtin %q); want the skill tool %s", i, tl.Name, tl.Builtin(), name)
		}
	}
	exec := func(session, command string) string {
		c, err := k.Open(t.Context(), session, "a")
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Call(t.Context(), tools.WorkspaceExecName, []byte(`{"command":`+strconvQuote(command)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}
	exec("one", "echo mine > work/note.txt")
	if got := exec("one", "cat work/note.txt"); !strings.Contains(got, `"stdout":"mine\n"`) {
		t.Errorf("session one lost its file: %s", got)
	}
	if got := exec("two sessions can have spaces", "cat work/note.txt || echo none"); !strings.Contains(got, `"stdout":"none\n"`) {
		t.Errorf("session two sees session one's file: %s", got)
	}
}

// TestCloseKillsBackgroundCommands: a background command started through
// a kit ends when the kit closes, even in a workspace Manager the caller
// keeps open.
func TestCloseKillsBackgroundCommands(t *testing.T) {
	wm, err := workspace.NewTemp(t.Context(), &workspace.Options{PlainDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wm.Discard(context.Background())
	k, err := skillkit.New(t.Context(), &skillkit.Options{Roots: []string{skills(t)}, Exec: &skillkit.ExecOptions{Runner: unconfined(t, 0), Workspaces: wm}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := k.Open(t.Context(), "bg", "a")
	if err != nil {
		t.Fatal(err)
	}
	// The shell writes its pid, which exec hands to cat.
	res, err := c.Call(t.Context(), tools.WorkspaceExecName, []byte(`{"command":"echo $$ > work/pid; exec cat","background":true}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, `"status":"running"`) {
		t.Fatalf("start: %v %s", err, res.Text)
	}
	ws, err := wm.Open(t.Context(), workspace.IDFor("bg"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		b, _ := os.ReadFile(filepath.Join(ws.WorkDir(), "pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if pid == 0 && time.Now().After(deadline) {
			t.Fatal("the command never wrote its pid")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waits for the command's end: it is gone (or a zombie of an
	// init that has not reaped it yet, whose command line is empty).
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && len(b) > 0 {
		t.Errorf("the background command (pid %d, %q) outlived the kit", pid, b)
	}
}

func strconvQuote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '"' || r == '\\' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}

// TestActivationThroughTheKit: an agent's Activation reaches its
// conversations, and AgentOptions reports each agent's options.
func TestActivationThroughTheKit(t *testing.T) {
	find := tools.New("find", "Finds.", func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Result{Text: "found"}, nil
	})
	k := newKit(t, skillkit.Options{Roots: []string{skills(t)}, Agents: map[string]skillkit.AgentOptions{"helper": {
		Activation: &skillkit.Activation{Sets: []tools.ToolSet{{Name: "search", Tools: []tools.Tool{find}}},
			Rules: []skillkit.ActivationRule{{Skill: "alpha", Sets: []string{"search"}}}}}}})
	if k.AgentOptions("helper").Activation == nil || k.AgentOptions("main").Activation != nil {
		t.Fatal("AgentOptions does not report the configured agents")
	}
	conv, err := k.Open(t.Context(), "", "helper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conv.User(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	step, err := conv.Respond(t.Context(), skillkit.Assistant{Calls: []skillkit.ToolCall{{ID: "1", Name: tools.LoadName, Arguments: `{"skill":"alpha"}`}}})
	if err != nil || step.Results[0].IsError {
		t.Fatalf("skill_load: %v %+v", err, step)
	}
	step, err = conv.Respond(t.Context(), skillkit.Assistant{Calls: []skillkit.ToolCall{{ID: "2", Name: "search_find", Arguments: `{}`}}})
	if err != nil || step.Results[0].Text != "found" {
		t.Fatalf("search_find after the load: %v %+v", err, step)
	}
}

// TestSkillToolsAndEnv: SkillTools narrows the skill tools per agent (the
// knowledge-only profile drops workspace_exec), and Exec.Env injects
// variables from the call's context, the call's own env winning.
func TestSkillToolsAndEnv(t *testing.T) {
	type tokenKey struct{}
	wm, err := workspace.NewTemp(t.Context(), &workspace.Options{PlainDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wm.Discard(context.Background())
	k := newKit(t, skillkit.Options{Roots: []string{skills(t)},
		Agents: map[string]skillkit.AgentOptions{
			"reader": {SkillTools: tools.DefaultNames()},
			"loader": {SkillTools: []string{tools.LoadName, tools.WorkspaceExecName}},
			"reaper": {SkillTools: []string{tools.WorkspaceExecName, tools.WorkspaceExecKillName}},
		},
		Exec: &skillkit.ExecOptions{Runner: unconfined(t, 0), Workspaces: wm, Env: func(ctx context.Context) map[string]string {
			tok, _ := ctx.Value(tokenKey{}).(string)
			return map[string]string{"USER_TOKEN": tok, "MODE": "provided"}
		}}})
	for agent, want := range map[string][]string{
		"reader": tools.DefaultNames(),
		// The companions follow workspace_exec unless one is named.
		"loader": {tools.LoadName, tools.WorkspaceExecName, tools.WorkspaceExecReadName, tools.WorkspaceExecWriteName, tools.WorkspaceExecKillName},
		"reaper": {tools.WorkspaceExecName, tools.WorkspaceExecKillName},
		"other":  append(tools.DefaultNames(), tools.ExecToolNames()...),
	} {
		ts, err := k.Tools(t.Context(), agent)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range ts {
			got = append(got, tl.Name)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("agent %s offers %v; want %v", agent, got, want)
		}
	}
	ctx := context.WithValue(t.Context(), tokenKey{}, "secret-42")
	c, err := k.Open(ctx, "", "loader")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(ctx, tools.WorkspaceExecName, []byte(`{"command":"echo $USER_TOKEN $MODE","env":{"MODE":"explicit"}}`))
	if err != nil || !strings.Contains(res.Text, `"stdout":"secret-42 explicit\n"`) {
		t.Fatalf("workspace_exec: %v %s", err, res.Text)
	}
}

// TestOpenOptions: tools, a catalog renderer and guidance for one handle,
// leaving the agent's configuration alone.
func TestOpenOptions(t *testing.T) {
	extra := tools.New("ask_helper", "Asks the helper.", func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Result{Text: "helped"}, nil
	})
	own := tools.New("mine", "Mine.", func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.Result{}, nil })
	k := newKit(t, skillkit.Options{Roots: []string{skills(t)}, Agent: skillkit.AgentOptions{Tools: []tools.Tool{own}, Catalog: assembly.CatalogOptions{Format: assembly.FormatList}}})
	render := func(_ context.Context, ss []skill.Summary) string { return "Only " + ss[0].Name + " matters." }
	c, err := k.Open(t.Context(), "", "main", skillkit.WithTools(extra), skillkit.WithCatalogRender(render),
		skillkit.WithGuidance(assembly.Guidance{Mode: assembly.GuidanceReplace, Text: "Be careful."}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.User(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	req, err := c.Request(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Tools[len(req.Tools)-1].Function.Name; got != "ask_helper" {
		t.Fatalf("last tool %q; want ask_helper", got)
	}
	var catalogText string
	for _, m := range req.Messages {
		if strings.HasPrefix(m.Content, "Available skills:") {
			catalogText = m.Content
		}
	}
	if catalogText != "Available skills:\nOnly alpha matters.\n\nBe careful." {
		t.Fatalf("catalog %q", catalogText)
	}
	// The agent's own configuration is unchanged.
	if ts, _ := k.Tools(t.Context(), "main"); ts[len(ts)-1].Name != "mine" {
		t.Fatal("WithTools changed the agent's tools")
	}
	if text, _ := k.Catalog(t.Context(), "main"); !strings.Contains(text, "- beta: Does the second thing.") {
		t.Fatalf("WithCatalogRender changed the agent's catalog: %q", text)
	}
	for _, tc := range []struct {
		opt  skillkit.OpenOption
		want string
	}{
		{skillkit.WithTools(own), `skillkit: Open: WithTools: tool "mine" has the name of one of the agent's tools`},
		{skillkit.WithTools(tools.Skill()), `tool "skill" has the name of one of the agent's tools`},
		{skillkit.WithTools(extra, extra), `two tools are named "ask_helper"`},
		{skillkit.WithGuidance(assembly.Guidance{Mode: assembly.GuidanceReplace}), "skillkit: Open: WithGuidance: Guidance.Text is empty"},
	} {
		if _, err := k.Open(t.Context(), "", "main", tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open: %v; want %q", err, tc.want)
		}
	}
}

// TestFallbackOnSummaryThroughTheKit: with the agent's FallbackOnSummary,
// a skill loaded in an earlier turn is shown again after a compaction.
func TestFallbackOnSummaryThroughTheKit(t *testing.T) {
	for _, on := range []bool{false, true} {
		k := newKit(t, skillkit.Options{Roots: []string{skills(t)}, Agent: skillkit.AgentOptions{Lifetime: loadstate.Session, FallbackOnSummary: on}})
		c, err := k.Open(t.Context(), "", "main")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.User(t.Context(), "first")
		if _, err := c.Respond(t.Context(), skillkit.Assistant{Calls: []skillkit.ToolCall{{ID: "1", Name: tools.LoadName, Arguments: `{"skill":"alpha"}`}}}); err != nil {
			t.Fatal(err)
		}
		_, _ = c.Respond(t.Context(), skillkit.Assistant{Text: "done"})
		_, _ = c.User(t.Context(), "second")
		p, err := c.PlanCompaction(t.Context(), 0, func(s string) (int, error) { return len(s), nil })
		if err != nil || p == nil {
			t.Fatalf("plan %v %v", p, err)
		}
		if _, err := c.Compact(t.Context(), p.Through, "Summary."); err != nil {
			t.Fatal(err)
		}
		req, err := c.Request(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		shown := strings.Contains(req.Text(), "# alpha")
		if shown != on {
			t.Fatalf("FallbackOnSummary %v: the earlier turn's skill shown %v", on, shown)
		}
	}
}

// TestURLRoot takes skills from a zip archive served over HTTP.
func TestURLRoot(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("greet/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("---\nname: greet\ndescription: Greets people. Use when asked to greet.\n---\n\nSay hello.\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(buf.Bytes()) }))
	defer hs.Close()
	t.Setenv("SKILLKIT_CACHE_DIR", t.TempDir())
	kit, err := skillkit.New(t.Context(), &skillkit.Options{Roots: []string{hs.URL + "/skills.zip"}})
	if err != nil {
		t.Fatal(err)
	}
	defer kit.Close()
	if sum, ok := kit.Skills(t.Context()).Lookup("greet"); !ok || sum.Description != "Greets people. Use when asked to greet." {
		t.Errorf("greet from the archive: %+v %v", sum, ok)
	}
	if _, err := skillkit.New(t.Context(), &skillkit.Options{Roots: []string{hs.URL + "/skills.zip#sha256=" + strings.Repeat("0", 64)}}); err == nil || !strings.Contains(err.Error(), "Options.Roots[0]") {
		t.Errorf("a wrong pin: %v", err)
	}
}
