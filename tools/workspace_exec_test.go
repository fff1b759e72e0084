package tools

import (
	"github.com/google/go-cmp/cmp"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/workspace"
)

// execExamples is the repository's example skills folder.
const execExamples = "../examples/skills"

// execLoaded is a load state holding exactly the named skills.
type execLoaded []string

func (l execLoaded) Loaded(name string) bool      { return slices.Contains(l, name) }
func (l execLoaded) Docs(string) ([]string, bool) { return nil, false }

// isolatedRunner returns the real isolated runner, skipping the test when
// the host lacks a feature it needs. Run as root, workspaces are bounded
// volumes; an unprivileged user cannot make those, so there the runner
// accepts plain directories (UnboundedDisk), as the user would have to.
func isolatedRunner(t testing.TB) sandbox.Runner {
	t.Helper()
	r, err := sandbox.NewIsolated(&sandbox.IsolatedOptions{
		UnboundedDisk: os.Geteuid() != 0,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		t.Skipf("isolated sandbox unavailable: host feature %q missing: %v", fe.Feature, fe.Err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// examplesSnapshot is a registry snapshot over the example skills.
func examplesSnapshot(t testing.TB) *registry.Snapshot {
	t.Helper()
	src, err := source.Dir(execExamples, "examples", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(context.Background(), []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Snapshot().Lookup("csv-stats"); !ok {
		t.Fatalf("csv-stats not discovered in %s", execExamples)
	}
	return reg.Snapshot()
}

// execFixture builds the tool over a fresh workspace.
type execFixture struct {
	tool Tool
	ws   *workspace.Workspace
	snap *registry.Snapshot
}

func newExecFixture(t *testing.T, opts *ExecOptions) execFixture {
	t.Helper()
	m, err := workspace.New(&workspace.Options{Root: t.TempDir(), InMemoryVolumes: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ws, err := m.Open(context.Background(), "session-1")
	if err != nil {
		t.Fatal(err)
	}
	tool, err := WorkspaceExec(WorkspaceExecConfig{
		Runner:     isolatedRunner(t),
		Workspaces: m,
		Options:    opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	return execFixture{tool: tool, ws: ws, snap: examplesSnapshot(t)}
}

// call runs the tool with args (marshalled to JSON) and the given loaded
// skills.
func (f execFixture) call(t *testing.T, args map[string]any, loaded ...string) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, f.tool, Call{Args: raw, Skills: f.snap, State: execLoaded(loaded), SessionID: "session-1"})
}

// decodeExec parses a successful-shape result.
func decodeExec(t *testing.T, r Result) ExecResult {
	t.Helper()
	var res ExecResult
	if err := json.Unmarshal([]byte(r.Text), &res); err != nil {
		t.Fatalf("result is not ExecResult JSON: %v\n%s", err, r.Text)
	}
	return res
}

func TestWorkspaceExecRunsLoadedSkillScript(t *testing.T) {
	f := newExecFixture(t, nil)
	r := f.call(t, map[string]any{
		"command": `python3 scripts/stats.py scripts/sample.csv && echo "skill=$SKILL_NAME pwd=$(pwd)" >&2`,
		"cwd":     "skills/csv-stats",
	}, "csv-stats")
	if r.IsError {
		t.Fatalf("IsError; text %s", r.Text)
	}
	res := decodeExec(t, r)
	var stats struct {
		Rows int `json:"rows"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &stats); err != nil {
		t.Fatalf("stdout is not the script's JSON: %v\n%s", err, res.Stdout)
	}
	if stats.Rows != 3 {
		t.Errorf("rows = %d, want 3", stats.Rows)
	}
	// The sandbox shows the workspace at sandbox.WorkspaceDir.
	wantErr := "skill=csv-stats pwd=" + sandbox.WorkspaceDir + "/skills/csv-stats\n"
	if res.Stderr != wantErr {
		t.Errorf("stderr = %q, want %q", res.Stderr, wantErr)
	}
	if res.ExitCode != 0 || res.TimedOut || res.StdoutTruncated || res.StderrTruncated {
		t.Errorf("unexpected status %+v", res)
	}
}

func TestWorkspaceExecStagesOnlyLoadedSkills(t *testing.T) {
	f := newExecFixture(t, nil)
	for _, tc := range []struct {
		name   string
		loaded []string
		want   string
	}{
		{"none loaded", nil, ""},
		{"one loaded", []string{"csv-stats"}, "csv-stats\n"},
		{"two loaded", []string{"release-notes", "csv-stats"}, "csv-stats\nrelease-notes\n"},
		{"unknown name in state", []string{"csv-stats", "not-a-skill"}, "csv-stats\nrelease-notes\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Staging is additive within a session: copies of skills
			// loaded by earlier calls stay, so the cases build on each
			// other in order.
			r := f.call(t, map[string]any{"command": "ls skills"}, tc.loaded...)
			if r.IsError {
				t.Fatalf("IsError; text %s", r.Text)
			}
			if got := decodeExec(t, r).Stdout; got != tc.want {
				t.Errorf("skills/ holds %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.ws.SkillsDir(), "api-style-guide")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("skill never loaded was staged (stat error %v)", err)
	}
}

func TestWorkspaceExecOutputFiles(t *testing.T) {
	f := newExecFixture(t, nil)
	r := f.call(t, map[string]any{
		"command":      `printf 'a,b\n1,2\n' > out/table.csv && printf '\211PNG\r\n\032\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1\10\6\0\0\0\37\25\304\211' > out/dot.png && echo ignored > work/scratch.txt`,
		"output_files": []string{"out/**"},
	})
	if r.IsError {
		t.Fatalf("IsError; text %s", r.Text)
	}
	res := decodeExec(t, r)
	want := []workspace.OutputFile{
		{Path: "out/dot.png", Size: 33, MIME: "image/png"},
		{Path: "out/table.csv", Size: 8, MIME: "text/csv", Content: "a,b\n1,2\n"},
	}
	if len(res.OutputFiles) != len(want) {
		t.Fatalf("output_files = %+v, want %+v", res.OutputFiles, want)
	}
	for i, w := range want {
		if g := res.OutputFiles[i]; g != w {
			t.Errorf("output_files[%d] = %+v, want %+v", i, g, w)
		}
	}
	// The same result as structured content, and the files as
	// attachments with their media types.
	if string(r.Structured) != r.Text {
		t.Errorf("structured content %s differs from the text %s", r.Structured, r.Text)
	}
	wantAtt := []Attachment{{Name: "out/dot.png", MIMEType: "image/png", Size: 33}, {Name: "out/table.csv", MIMEType: "text/csv", Size: 8, Text: "a,b\n1,2\n"}}
	if diff := cmp.Diff(wantAtt, r.Attachments); diff != "" {
		t.Errorf("attachments (-want +got):\n%s", diff)
	}
}

func TestWorkspaceExecTimeoutCappedAtOperatorMax(t *testing.T) {
	const max = 500 * time.Millisecond
	f := newExecFixture(t, &ExecOptions{MaxTimeout: max})
	if d := f.tool.InputSchema.Properties["timeout_sec"].Description; !strings.Contains(d, "at most 0.5") {
		t.Errorf("timeout_sec description %q does not state the maximum", d)
	}
	start := time.Now()
	r := f.call(t, map[string]any{"command": "sleep 30", "timeout_sec": 3600})
	elapsed := time.Since(start)
	if !r.IsError {
		t.Errorf("a timed-out command is not an error result: %s", r.Text)
	}
	res := decodeExec(t, r)
	if !res.TimedOut {
		t.Errorf("timed_out = false; result %s", r.Text)
	}
	// The cap plus the sandbox's SIGTERM→SIGKILL grace, far below 30 s.
	if limit := max + sandbox.DefaultKillGrace + 2*time.Second; elapsed > limit {
		t.Errorf("took %v, want under %v: the requested 3600 s was not capped to %v", elapsed, limit, max)
	}
	if res.DurationMS < max.Milliseconds() {
		t.Errorf("duration_ms = %d, want at least %d", res.DurationMS, max.Milliseconds())
	}
	if want := "the timeout asked for (1h0m0s) is over the operator's maximum; the command had 500ms"; len(res.Notes) == 0 || res.Notes[0] != want {
		t.Errorf("notes %q, want first %q", res.Notes, want)
	}
}

func TestWorkspaceExecRefusesRequests(t *testing.T) {
	f := newExecFixture(t, nil)
	ran := filepath.Join(f.ws.Dir(), "ran")
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"dotdot cwd", map[string]any{"cwd": "../x"}, `cwd "../x" contains ".."`},
		{"dotdot inside cwd", map[string]any{"cwd": "skills/../../x"}, `contains ".."`},
		{"absolute cwd", map[string]any{"cwd": "/etc"}, `cwd "/etc" is absolute`},
		{"dotdot glob", map[string]any{"output_files": []string{"out/**", "../**"}}, `output_files[1]: workspace: invalid glob: "../**" contains '..'`},
		{"dotdot glob inside", map[string]any{"output_files": []string{"out/../../secret"}}, `"out/../../secret" contains '..'`},
		{"absolute glob", map[string]any{"output_files": []string{"/etc/*"}}, "is absolute"},
		{"bad glob", map[string]any{"output_files": []string{"out/[a"}}, `"out/[a" is not a valid pattern`},
		{"NUL in command", map[string]any{"command": "true\x00x"}, "Error: command contains a NUL byte"},
		{"bad env name", map[string]any{"env": map[string]string{"A=B": "1"}}, `Error: env: "A=B" is not a usable environment variable`},
		{"empty element in glob", map[string]any{"output_files": []string{"out//x"}}, `"out//x" contains an empty or '.' element`},
		{"PATH in env", map[string]any{"env": map[string]string{"PATH": "/tmp/evil"}}, `Error: env: environment variable "PATH" changes how programs are found, loaded or configured and cannot be set here; remove it`},
		{"LD_PRELOAD in env", map[string]any{"env": map[string]string{"LD_PRELOAD": "/tmp/x.so"}}, `Error: env: environment variables starting with LD_ change how programs load code or configuration and cannot be set here; remove "LD_PRELOAD"`},
		{"workspace var in env", map[string]any{"env": map[string]string{"OUTPUT_DIR": "/tmp"}}, `env key "OUTPUT_DIR" is set by the workspace`},
		{"negative timeout", map[string]any{"timeout_sec": -1}, "timeout_sec -1 is negative"},
		{"unknown argument", map[string]any{"cmd": "x"}, `unknown field "cmd"`},
		{"missing cwd", map[string]any{"cwd": "skills/csv-stats"}, `Error: cwd: working directory "skills/csv-stats": lstat`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := tc.args["command"]; !ok && tc.name != "unknown argument" {
				tc.args["command"] = "touch " + ran
			}
			r := f.call(t, tc.args)
			if !r.IsError || !strings.HasPrefix(r.Text, "Error: ") || !strings.Contains(r.Text, tc.want) {
				t.Errorf("got %+v, want an error result containing %q", r, tc.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatal("the command ran despite the refusal")
			}
		})
	}
}

func TestWorkspaceExecResultShape(t *testing.T) {
	f := newExecFixture(t, nil)
	r := f.call(t, map[string]any{"command": "cat; echo oops >&2; exit 3", "stdin": "in\n", "env": map[string]string{"GREETING": "hi"}})
	if !r.IsError {
		t.Errorf("exit 3 is not an error result: %s", r.Text)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Text), &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"duration_ms", "exit_code", "output_files", "stderr", "stderr_truncated", "stdout", "stdout_truncated", "timed_out"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	if m["exit_code"] != 3.0 || m["stdout"] != "in\n" || m["stderr"] != "oops\n" || m["timed_out"] != false {
		t.Errorf("values = %v", m)
	}
	if files, ok := m["output_files"].([]any); !ok || len(files) != 0 {
		t.Errorf("output_files = %#v, want []", m["output_files"])
	}
}

func TestWorkspaceExecEnvReachesCommand(t *testing.T) {
	f := newExecFixture(t, nil)
	r := f.call(t, map[string]any{"command": `echo "$GREETING $WORKSPACE_DIR $OUTPUT_DIR"`, "env": map[string]string{"GREETING": "hi"}})
	want := "hi " + sandbox.WorkspaceDir + " " + sandbox.WorkspaceDir + "/out\n"
	if got := decodeExec(t, r).Stdout; r.IsError || got != want {
		t.Errorf("stdout %q (IsError %v), want %q", got, r.IsError, want)
	}
}

func TestWorkspaceExecOutputLimit(t *testing.T) {
	const limit = 64
	f := newExecFixture(t, &ExecOptions{Limits: sandbox.Limits{OutputBytes: limit}})
	for _, tc := range []struct {
		n         int
		truncated bool
	}{{limit, false}, {limit + 1, true}} {
		r := f.call(t, map[string]any{"command": fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", tc.n)})
		res := decodeExec(t, r)
		if res.StdoutTruncated != tc.truncated || len(res.Stdout) > limit {
			t.Errorf("%d bytes: stdout_truncated = %v (len %d), want %v", tc.n, res.StdoutTruncated, len(res.Stdout), tc.truncated)
		}
	}
}

func TestNewExecutorConfig(t *testing.T) {
	r, err := sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	wsm, err := workspace.New(&workspace.Options{Root: t.TempDir(), PlainDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wsm.Close() })
	for _, tc := range []struct {
		name string
		cfg  WorkspaceExecConfig
		want string
	}{
		{"nil runner", WorkspaceExecConfig{Workspaces: wsm}, "Runner is nil"},
		{"nil workspaces", WorkspaceExecConfig{Runner: r}, "WorkspaceExecConfig.Workspaces is nil"},
		{"negative max", WorkspaceExecConfig{Runner: r, Workspaces: wsm, Options: &ExecOptions{MaxTimeout: -time.Second}}, "MaxTimeout is -1s"},
		{"negative default", WorkspaceExecConfig{Runner: r, Workspaces: wsm, Options: &ExecOptions{DefaultTimeout: -time.Second}}, "DefaultTimeout is -1s"},
		{"default above max", WorkspaceExecConfig{Runner: r, Workspaces: wsm, Options: &ExecOptions{MaxTimeout: time.Second, DefaultTimeout: 2 * time.Second}}, "DefaultTimeout 2s exceeds MaxTimeout 1s"},
		{"negative limit", WorkspaceExecConfig{Runner: r, Workspaces: wsm, Options: &ExecOptions{Limits: sandbox.Limits{CPUSeconds: -5}}}, "ExecOptions.Limits.CPUSeconds is -5"},
		{"negative collection limit", WorkspaceExecConfig{Runner: r, Workspaces: wsm, Options: &ExecOptions{CollectLimits: &workspace.CollectLimits{MaxFiles: -1}}}, "ExecOptions.CollectLimits: workspace: invalid option: CollectLimits.MaxFiles is -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WorkspaceExec(tc.cfg)
			if !errors.Is(err, ErrExecConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrExecConfig containing %q", err, tc.want)
			}
		})
	}
	// A MaxTimeout below the sandbox default lowers the default timeout.
	ex, err := NewExecutor(r, &ExecOptions{MaxTimeout: time.Second})
	if err != nil || ex.defTimeout != time.Second || ex.MaxTimeout() != time.Second {
		t.Errorf("defaults with MaxTimeout 1s: %+v, %v", ex, err)
	}
	// A call outside a session has no workspace: a host error, not the
	// model's.
	tool, err := WorkspaceExec(WorkspaceExecConfig{Runner: r, Workspaces: wsm})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tool.Call(context.Background(), Call{Args: json.RawMessage(`{"command":"true"}`)}); err == nil || !strings.Contains(err.Error(), "names no session") {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestCleanCwdAndSkillOfDir(t *testing.T) {
	staged := map[string]bool{"csv-stats": true}
	for _, tc := range []struct {
		in, dir, skill string
	}{
		{"", "", ""},
		{".", "", ""},
		{"skills/csv-stats", "skills/csv-stats", "csv-stats"},
		{"skills/csv-stats/scripts/", "skills/csv-stats/scripts", "csv-stats"},
		{"./skills//csv-stats", "skills/csv-stats", "csv-stats"},
		{"skills/other", "skills/other", ""},
		{"skills", "skills", ""},
		{"out", "out", ""},
	} {
		dir, err := cleanCwd(tc.in)
		if err != nil || dir != tc.dir {
			t.Errorf("cleanCwd(%q) = %q, %v; want %q", tc.in, dir, err, tc.dir)
		}
		if got := skillOfDir(dir, staged); got != tc.skill {
			t.Errorf("skillOfDir(%q) = %q, want %q", dir, got, tc.skill)
		}
	}
}

func ExampleWorkspaceExec() {
	r, err := sandbox.NewIsolated(nil)
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		fmt.Println(`{"exit_code":0,"stdout":"hello\n","timed_out":false}`) // this kernel cannot isolate
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	root, _ := os.MkdirTemp("", "workspaces")
	defer os.RemoveAll(root)
	m, _ := workspace.New(&workspace.Options{Root: root})
	defer m.Close() // unmounts the workspace volumes a root process makes
	tool, err := WorkspaceExec(WorkspaceExecConfig{Runner: r, Workspaces: m, Options: &ExecOptions{MaxTimeout: time.Minute}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each call runs in the workspace of its session.
	res, err := tool.Call(context.Background(), Call{SessionID: "session-1",
		Args: json.RawMessage(`{"command": "echo hello > out/greeting.txt && cat out/greeting.txt"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	var out ExecResult
	_ = json.Unmarshal([]byte(res.Text), &out)
	b, _ := json.Marshal(map[string]any{"exit_code": out.ExitCode, "stdout": out.Stdout, "timed_out": out.TimedOut})
	fmt.Println(string(b))
	// Output: {"exit_code":0,"stdout":"hello\n","timed_out":false}
}

func TestWorkspaceExecSerializesCommands(t *testing.T) {
	f := newExecFixture(t, nil)
	// Each command fails if another one is inside the critical section at
	// the same time; the workspace lock must keep them apart.
	const n = 3
	results := make(chan Result, n)
	for range n {
		go func() {
			results <- f.call(t, map[string]any{"command": "mkdir work/busy || exit 9; sleep 0.2; rmdir work/busy"})
		}()
	}
	for range n {
		if r := <-results; r.IsError {
			t.Errorf("concurrent command failed: %s", r.Text)
		}
	}
}

// FuzzCleanCwd checks that no accepted cwd is absolute or climbs out of the
// workspace.
func FuzzCleanCwd(f *testing.F) {
	for _, s := range []string{"", ".", "skills/a", "../x", "a/../../b", "/etc", "a//b/", "./a", "a\\..\\b", "skills/a/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		dir, err := cleanCwd(in)
		if err != nil {
			if !errors.Is(err, ErrExecRequest) {
				t.Fatalf("cleanCwd(%q) error %v does not wrap ErrExecRequest", in, err)
			}
			return
		}
		if dir != "" && !filepath.IsLocal(dir) {
			t.Fatalf("cleanCwd(%q) = %q, not local to the workspace", in, dir)
		}
		if slices.Contains(strings.Split(dir, "/"), "..") {
			t.Fatalf("cleanCwd(%q) = %q contains ..", in, dir)
		}
	})
}

// FuzzCheckGlob checks that no glob the executor accepts is absolute or
// has a ".." element.
func FuzzCheckGlob(f *testing.F) {
	for _, s := range []string{"out/**", "../**", "/etc/*", "out/[a", "a/../b", "**/*.png", "{a,b}/*", "out//x", "./out/*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, g string) {
		if workspace.CheckGlob(g) != nil {
			return
		}
		g = strings.TrimLeft(g, "./")
		if strings.HasPrefix(g, "/") || slices.Contains(strings.Split(g, "/"), "..") {
			t.Fatalf("CheckGlob accepted %q", g)
		}
	})
}

// TestWorkspaceExecSaysWhatWasNotStaged checks that a skill's own
// top-level inputs/ folder, whose name the workspace link takes, is named
// in the result rather than left out without a word.
func TestWorkspaceExecSaysWhatWasNotStaged(t *testing.T) {
	f := newExecFixture(t, nil)
	root := t.TempDir()
	dir := filepath.Join(root, "withinputs")
	if err := os.MkdirAll(filepath.Join(dir, "inputs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: withinputs\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inputs", "data.csv"), []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.Dir(root, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(context.Background(), []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.snap = reg.Snapshot()
	res := decodeExec(t, f.call(t, map[string]any{"command": "true"}, "withinputs"))
	want := "skills/withinputs/inputs was not staged: name reserved for the link to the workspace's work/inputs directory"
	if len(res.Notes) == 0 || res.Notes[0] != want {
		t.Errorf("notes %q, want first %q", res.Notes, want)
	}
}
