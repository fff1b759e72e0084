package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// runCLI runs `skillkit ARGS` with ctx, stdout going to out (a buffer
// when nil) and the environment vars, in a fresh working directory.
func runCLI(t *testing.T, ctx context.Context, out *syncBuffer, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if out == nil {
		out = &syncBuffer{}
	}
	var errb bytes.Buffer
	code = Run(ctx, args, Env{Stdout: out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }, Cwd: t.TempDir()})
	return out.String(), errb.String(), code
}

// syncBuffer is a buffer that may call onWrite with what was written so
// far, after each write.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	onWrite func(string)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.b.Write(p)
	text := s.b.String()
	s.mu.Unlock()
	if s.onWrite != nil {
		s.onWrite(text)
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// greetSkills writes a skill tree of one skill with one document.
func greetSkills(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := writeSkill(t, root, "greet", "---\nname: greet\ndescription: Greet people by name in the house style. Use when asked to greet someone.\n---\n# Greeting\n\nGreet by first name, as the style reference says.\n")
	if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "references", "style.md"), []byte("# Style\n\nSay \"Hello, NAME!\" and nothing more.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// greetScript is a tool loop on greetSkills: one answer with four calls
// (a load with a document, a load of a skill that does not exist, a read
// whose arguments are longer than the transcript shows), the skill tool
// (a result of several lines), then the answer.
// usage, when set, is scripted; otherwise the server computes it.
func greetScript(usage bool) *scripted.Script {
	long := "references/" + strings.Repeat("a-very-long-document-name-", 6) + ".md"
	s := &scripted.Script{Steps: []scripted.Step{
		{
			Expect: &scripted.Expect{ToolsInclude: []string{"skill_load"}, LastRole: "user", LastContains: "Greet Ada"},
			Calls: []scripted.Call{
				{ID: "call_1", Name: "skill_load", Arguments: `{"skill":"greet","docs":["references/style.md"]}`},
				{ID: "call_2", Name: "skill_load", Arguments: `{"skill":"nope"}`},
				{ID: "call_3", Name: "skill_read", Arguments: scripted.Arguments(fmt.Sprintf(`{"skill":"greet","path":%q}`, long))},
				{ID: "call_4", Name: "skill", Arguments: `{"name":"greet"}`},
			},
		},
		{Expect: &scripted.Expect{ToolResults: []string{"call_1", "call_2", "call_3", "call_4"}}, Text: "Hello, Ada!"},
	}}
	if usage {
		s.Steps[0].Usage = &model.Usage{PromptTokens: 900, CompletionTokens: 40}
		s.Steps[1].Usage = &model.Usage{PromptTokens: 1400, CompletionTokens: 5, CachedPromptTokens: 896}
	}
	return s
}

// newServer starts a scripted Chat Completions server for the test.
func newServer(t *testing.T, s *scripted.Script) *openaitest.Server {
	t.Helper()
	srv, err := openaitest.New(s, &openaitest.Options{Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// played fails the test when srv refused a request or has steps left.
func played(t *testing.T, srv *openaitest.Server) {
	t.Helper()
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Done(); err != nil {
		t.Fatal(err)
	}
}

// writeScript writes s as a script file and returns its path.
func writeScript(t *testing.T, s *scripted.Script) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dumped reads the files of a --dump-requests folder, in name order.
func dumped(t *testing.T, dir string) (names []string, bodies [][]byte) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		names, bodies = append(names, e.Name()), append(bodies, b)
	}
	return names, bodies
}

// sameBodies checks that the --dump-requests folder dir holds one file per
// request srv received, numbered in order, each the bytes received.
func sameBodies(t *testing.T, dir string, srv *openaitest.Server) {
	t.Helper()
	names, bodies := dumped(t, dir)
	ex := srv.Exchanges()
	var want []string
	for i := range ex {
		want = append(want, fmt.Sprintf("%04d.json", i+1))
	}
	if len(ex) == 0 || !slices.Equal(names, want) {
		t.Fatalf("dumped %q for %d requests; want %q", names, len(ex), want)
	}
	for i := range ex {
		if !bytes.Equal(bodies[i], ex[i].Body) {
			t.Errorf("%s differs from request %d as the server received it:\n%s\n%s", names[i], i+1, bodies[i], ex[i].Body)
		}
	}
}

var sessionLine = regexp.MustCompile(`skillkit (?:run|chat): session ([0-9a-f]{32}) \(continue it with --session [0-9a-f]{32}\)\n`)

// sessionOf returns the session ID a run or chat printed on stderr.
func sessionOf(t *testing.T, stderr string) string {
	t.Helper()
	m := sessionLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no session line on stderr:\n%s", stderr)
	}
	return m[1]
}

// The whole turn through real HTTP: the transcript, the usage line, and
// the requests dumped as the server received them; the model and server
// come from the flags or from the environment, flags first.
func TestRunTranscript(t *testing.T) {
	root := greetSkills(t)
	for _, tc := range []struct {
		name  string
		flags func(url string) []string
		vars  func(url string) map[string]string
	}{
		{"flags", func(url string) []string { return []string{"--model", "test-model", "--base-url", url} }, func(string) map[string]string { return nil }},
		{"environment", func(string) []string { return nil }, func(url string) map[string]string {
			return map[string]string{"OPENAI_BASE_URL": url, "SKILLKIT_MODEL": "test-model"}
		}},
		{"flags over environment", func(url string) []string { return []string{"--model", "test-model", "--base-url", url} }, func(string) map[string]string {
			return map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "SKILLKIT_MODEL": "other-model"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, greetScript(true))
			dump := filepath.Join(t.TempDir(), "requests", "new") // created
			args := append([]string{"run", "--store", filepath.Join(t.TempDir(), "s.db"), "--dump-requests", dump}, tc.flags(srv.URL)...)
			out, errOut, code := runCLI(t, context.Background(), nil, tc.vars(srv.URL), append(args, root, "Greet Ada, please.")...)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			played(t, srv)
			sessionOf(t, errOut)
			golden(t, "run_transcript.golden", strings.ReplaceAll(out, srv.URL, "URL"))
			if !strings.HasSuffix(out, "\ntokens: prompt 2300 (cached 896) completion 45\n") || strings.Count(out, "tokens:") != 1 {
				t.Errorf("the transcript does not end with one usage line summing the steps:\n%s", out)
			}
			sameBodies(t, dump, srv)
		})
	}
}

// A retried request is dumped once: its attempts send the same bytes.
func TestRunDumpRetried(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Error: &scripted.Error{Status: 503, Message: "warming up", RetryAfter: "0"}},
		{Text: "Hi."},
	}})
	dump := t.TempDir()
	if err := os.WriteFile(filepath.Join(dump, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--store", filepath.Join(t.TempDir(), "s.db"),
		"--model", "test-model", "--base-url", srv.URL, "--dump-requests", dump, greetSkills(t), "Hello")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	names, bodies := dumped(t, dump)
	ex := srv.Exchanges()
	if len(ex) != 2 || !slices.Equal(names, []string{"0001.json", "notes.txt"}) || !bytes.Equal(bodies[0], ex[0].Body) || !bytes.Equal(ex[0].Body, ex[1].Body) {
		t.Errorf("%d attempts sent, dumped %q; want one file, the bytes of both attempts", len(ex), names)
	}
}

// A folder that holds dump files already is refused before anything is
// asked or recorded.
func TestRunDumpRefusesOverwrite(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{{Text: "Hi."}}})
	dump := t.TempDir()
	old := filepath.Join(dump, "0002.json")
	if err := os.WriteFile(old, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "s.db")
	out, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--store", store,
		"--model", "test-model", "--base-url", srv.URL, "--dump-requests", dump, greetSkills(t), "Hello")
	if code != 2 || out != "" || !strings.Contains(errOut, "already holds 0002.json from an earlier run; pick an empty folder") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and the refusal", code, out, errOut)
	}
	if b, _ := os.ReadFile(old); string(b) != "earlier" || len(srv.Exchanges()) != 0 {
		t.Errorf("the earlier file holds %q and %d requests were sent; want it untouched and none", b, len(srv.Exchanges()))
	}
	if _, err := os.Stat(store); err == nil {
		t.Error("the refused run opened the store")
	}
}

// --script asks no server and needs no key or model; its dumps are the
// bodies the adapter sends for the same run, byte for byte.
func TestRunScriptDumpsAdapterBodies(t *testing.T) {
	root := greetSkills(t)
	script := writeScript(t, greetScript(false))
	scriptDump := filepath.Join(t.TempDir(), "scripted")
	out, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--store", filepath.Join(t.TempDir(), "s.db"),
		"--script", script, "--model", "test-model", "--dump-requests", scriptDump, root, "Greet Ada, please.")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if first, _, _ := strings.Cut(out, "\n"); first != "model: scripted, replaying "+script+" (no network)" {
		t.Errorf("the transcript starts with %q; want it to say the model is scripted", first)
	}
	if !strings.HasSuffix(out, "assistant: Hello, Ada!\ntokens: prompt 0 (cached 0) completion 0\n") {
		t.Errorf("transcript:\n%s", out)
	}

	srv := newServer(t, greetScript(false))
	if _, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--store", filepath.Join(t.TempDir(), "s.db"),
		"--model", "test-model", "--base-url", srv.URL, root, "Greet Ada, please."); code != 0 {
		t.Fatalf("over HTTP: exit %d, stderr:\n%s", code, errOut)
	}
	sameBodies(t, scriptDump, srv)
}

// --session continues a session of the SQLite store in a second process's
// run: its request holds the first turn, and its usage line reports what
// the server read from its cache.
func TestRunSessionContinues(t *testing.T) {
	root := greetSkills(t)
	store := filepath.Join(t.TempDir(), "s.db")
	s := greetScript(false)
	s.Steps = append(s.Steps, scripted.Step{Expect: &scripted.Expect{LastRole: "user", LastContains: "And Grace?"}, Text: "Hello, Grace!"})
	srv := newServer(t, s)
	common := []string{"run", "--store", store, "--model", "test-model", "--base-url", srv.URL}
	_, errOut, code := runCLI(t, context.Background(), nil, nil, append(common, root, "Greet Ada, please.")...)
	if code != 0 {
		t.Fatalf("first run: exit %d, stderr:\n%s", code, errOut)
	}
	id := sessionOf(t, errOut)
	out, errOut, code := runCLI(t, context.Background(), nil, nil, append(common, "--session", id, "And Grace?")...)
	if code != 0 {
		t.Fatalf("second run: exit %d, stderr:\n%s", code, errOut)
	}
	if got := sessionOf(t, errOut); got != id {
		t.Errorf("the second run recorded to session %s; want %s", got, id)
	}
	if err := srv.Done(); err != nil {
		t.Fatal(err)
	}
	ex := srv.Exchanges()
	last := ex[len(ex)-1]
	var texts []string
	for _, m := range last.Request.Messages {
		texts = append(texts, m.Content)
	}
	if !slices.Contains(texts, "Greet Ada, please.") || !slices.Contains(texts, "Hello, Ada!") || !slices.Contains(texts, "And Grace?") {
		t.Errorf("the second run's request lacks the first turn: %q", texts)
	}
	if last.Usage.CachedPromptTokens == 0 {
		t.Fatal("the server reported no cached tokens for a request that extends the previous one")
	}
	want := fmt.Sprintf("tokens: prompt %d (cached %d) completion %d\n", last.Usage.PromptTokens, last.Usage.CachedPromptTokens, last.Usage.CompletionTokens)
	if !strings.HasSuffix(out, want) {
		t.Errorf("the second run's transcript does not end with %q:\n%s", want, out)
	}
	// The session commands read what run recorded.
	if prompt := mustSess(t, store, "prompt", id); !strings.Contains(prompt, "Hello, Grace!") {
		t.Errorf("session prompt does not show the run's answer:\n%s", prompt)
	}
}

func TestRunErrors(t *testing.T) {
	root := greetSkills(t)
	store := filepath.Join(t.TempDir(), "s.db")
	unavailable := newServer(t, &scripted.Script{Steps: slices.Repeat([]scripted.Step{{Error: &scripted.Error{Status: 500, Message: "the GPU is on fire", RetryAfter: "0"}}}, 4)})
	looping := newServer(t, &scripted.Script{Steps: []scripted.Step{{Calls: []scripted.Call{{ID: "c1", Name: "skill_load", Arguments: `{"skill":"greet"}`}}}}})
	server := func(url string) []string { return []string{"--model", "test-model", "--base-url", url} }
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		code int
		want []string
	}{
		{"no PROMPT", nil, []string{"--script", "x.json"}, 2, []string{"skillkit: run: no PROMPT; give the user's message as the last argument"}},
		{"empty PROMPT", nil, []string{"--script", "x.json", root, " "}, 2, []string{"run: PROMPT is empty"}},
		{"no model", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, []string{root, "Hi"}, 2, []string{"no model name: pass --model NAME or set SKILLKIT_MODEL"}},
		{"no server", map[string]string{"SKILLKIT_MODEL": "m"}, []string{root, "Hi"}, 2, []string{"no server: pass --base-url URL or set OPENAI_BASE_URL"}},
		{"bad mode", nil, []string{"--script", "x.json", "--mode", "forever", root, "Hi"}, 2, []string{`--mode: load lifetime "forever"`}},
		{"mode of a continued session", nil, []string{"--script", "x.json", "--session", "abc", "--mode", "once", "Hi"}, 2, []string{"--mode applies to a new session"}},
		{"roots of a continued session", nil, []string{"--script", "x.json", "--session", "abc", root, "Hi"}, 2, []string{"apply to a new session; session abc keeps the roots"}},
		{"local without exec", nil, []string{"--script", "x.json", "--local", root, "Hi"}, 2, []string{"--local only applies with --exec"}},
		{"max steps 0", nil, []string{"--script", "x.json", "--max-steps", "0", root, "Hi"}, 2, []string{"--max-steps is 0"}},
		{"missing script", nil, []string{"--script", filepath.Join(root, "none.json"), root, "Hi"}, 1, []string{"skillkit: error: --script: scripted model:", "none.json"}},
		{"unknown session", nil, append(server(looping.URL), "--session", "0123abcd", "Hi"), 1, []string{"skillkit: error: --session 0123abcd: no such session", "skillkit session ls --store " + store}},
		{"server error after retries", nil, append(server(unavailable.URL), root, "Hi"), 1, []string{"skillkit: error: ", "500 Internal Server Error: the GPU is on fire (after 4 attempts); the server failed"}},
		{"step limit", nil, append(server(looping.URL), "--max-steps", "1", root, "Hi"), 1, []string{"skillkit: error: the model still called tools after 1 request, the step limit; the steps before it are recorded in session ", "raise it with --max-steps N"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, context.Background(), nil, tc.vars, append([]string{"run", "--store", store}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d; want %d (stderr %q)", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
	if len(unavailable.Exchanges()) != 4 {
		t.Errorf("the failing server got %d attempts; want 4", len(unavailable.Exchanges()))
	}
}

// --json prints one object per event with the documented fields only.
func TestRunJSON(t *testing.T) {
	srv := newServer(t, greetScript(true))
	out, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--json", "--store", filepath.Join(t.TempDir(), "s.db"),
		"--model", "test-model", "--base-url", srv.URL, greetSkills(t), "Greet Ada, please.")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	id := sessionOf(t, errOut)
	type line struct {
		Kind    string             `json:"kind"`
		Session string             `json:"session"`
		Step    int                `json:"step"`
		Text    string             `json:"text"`
		Model   string             `json:"model"`
		Calls   []session.ToolCall `json:"calls"`
		Call    *session.ToolCall  `json:"call"`
		Result  *string            `json:"result"`
		IsError bool               `json:"is_error"`
		Loads   []session.Load     `json:"loads"`
		Usage   *model.Usage       `json:"usage"`
	}
	var lines []line
	var kinds []string
	for _, raw := range strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n") {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.DisallowUnknownFields()
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("%v in line %q", err, raw)
		}
		if l.Session != id {
			t.Errorf("line %q names session %q; want %s", raw, l.Session, id)
		}
		lines, kinds = append(lines, l), append(kinds, l.Kind)
	}
	want := []string{"user", "response", "tool_result", "tool_result", "tool_result", "tool_result", "text", "text", "response", "answer"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds %q; want %q", kinds, want)
	}
	resp, load, bad, answer := lines[1], lines[2], lines[3], lines[9]
	if resp.Step != 1 || len(resp.Calls) != 4 || resp.Model != "test-model" || resp.Usage == nil || *resp.Usage != (model.Usage{PromptTokens: 900, CompletionTokens: 40}) {
		t.Errorf("response: %+v", resp)
	}
	if load.Call == nil || load.Call.ID != "call_1" || load.Result == nil || *load.Result != "loaded: greet" || load.IsError ||
		len(load.Loads) != 1 || load.Loads[0].Skill != "greet" || !slices.Equal(load.Loads[0].Docs, []string{"references/style.md"}) {
		t.Errorf("tool result of the load: %+v", load)
	}
	if !bad.IsError || bad.Loads != nil {
		t.Errorf("tool result of the unknown skill: %+v", bad)
	}
	if answer.Text != "Hello, Ada!" || answer.Step != 2 || answer.Usage == nil || *answer.Usage != (model.Usage{PromptTokens: 2300, CompletionTokens: 45, CachedPromptTokens: 896}) {
		t.Errorf("answer: %+v", answer)
	}
}

// Ctrl-C (the context ending) after the first step ends the run with exit
// status 130; the first step stays recorded, whole.
func TestRunInterrupted(t *testing.T) {
	s := greetScript(false)
	s.Steps[1] = scripted.Step{Text: "Hello", Stall: true}
	srv := newServer(t, s)
	store := filepath.Join(t.TempDir(), "s.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled as the first step's last result is printed: before or
	// while the second request is made, which only ends with ctx.
	out := &syncBuffer{onWrite: func(text string) {
		if strings.Count(text, "← ") == 4 {
			cancel()
		}
	}}
	_, errOut, code := runCLI(t, ctx, out, nil, "run", "--store", store, "--model", "test-model", "--base-url", srv.URL, greetSkills(t), "Greet Ada, please.")
	if code != 130 || !strings.Contains(errOut, "skillkit: interrupted; the steps before it are recorded in session ") {
		t.Fatalf("exit %d, stderr %q; want 130 and what stays recorded", code, errOut)
	}
	if !regexp.MustCompile(`\n← .*\ntokens: prompt \d+ \(cached \d+\) completion \d+\n$`).MatchString(out.String()) {
		t.Errorf("no usage line after the interruption:\n%s", out)
	}
	st, err := sqlitestore.Open(context.Background(), store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, err := st.Get(context.Background(), sessionOf(t, errOut))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []session.Kind
	for _, ev := range sess.Events {
		kinds = append(kinds, ev.Kind)
	}
	want := []session.Kind{session.KindContext, session.KindUser, session.KindAssistant, session.KindTool, session.KindTool, session.KindTool, session.KindTool}
	if !slices.Equal(kinds, want) {
		t.Errorf("recorded %v; want the catalog, the message and the first step whole: %v", kinds, want)
	}
}

// --exec --local gives the model workspace_exec, unconfined, and says so
// loudly.
func TestRunExecLocal(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Expect: &scripted.Expect{ToolsInclude: []string{"workspace_exec"}}, Calls: []scripted.Call{{ID: "c1", Name: "workspace_exec", Arguments: `{"command":"echo from-the-workspace"}`}}},
		{Expect: &scripted.Expect{ToolResults: []string{"c1"}, LastContains: "from-the-workspace"}, Text: "Done."},
	}})
	store := filepath.Join(t.TempDir(), "s.db")
	out, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--exec", "--local", "--store", store, "--model", "test-model", "--base-url", srv.URL, greetSkills(t), "Run it.")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "skillkit run: WARNING: --local runs every workspace_exec command UNCONFINED") {
		t.Errorf("no warning about --local on stderr:\n%s", errOut)
	}
	if !strings.Contains(out, "→ workspace_exec {\"command\":\"echo from-the-workspace\"}\n") || !regexp.MustCompile(`\nassistant: Done.\ntokens: prompt \d+ \(cached \d+\) completion \d+\n$`).MatchString(out) {
		t.Errorf("transcript:\n%s", out)
	}
	_, errOut, code = runCLI(t, context.Background(), nil, nil, "run", "--exec", "--local", "--network", "--store", store, "--model", "test-model", "--base-url", srv.URL, "Run it.")
	if code != 1 || !strings.Contains(errOut, "run: --network only applies to the sandbox; --local already allows all network access") {
		t.Errorf("--local --network: exit %d, stderr %q", code, errOut)
	}
}

// The README's command: the bundled script over the bundled skills, with
// no key and no server.
func TestRunExampleScript(t *testing.T) {
	script, err := filepath.Abs("../../examples/run/api-errors.json")
	if err != nil {
		t.Fatal(err)
	}
	skills, err := filepath.Abs(examples)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--store", filepath.Join(t.TempDir(), "s.db"), "--script", script, skills, "How should my API report errors?")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	golden(t, "run_example.golden", strings.ReplaceAll(out, script, "examples/run/api-errors.json"))
}

// The --exec sandbox is the isolated runner, as for skillkit exec: the
// command sees the workspace and not the host's files.
func TestRunExecIsolated(t *testing.T) {
	needIsolation(t)
	host, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cmd := fmt.Sprintf("ls /workspace; test -e %s && echo host-visible; true", host)
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Calls: []scripted.Call{{ID: "c1", Name: "workspace_exec", Arguments: scripted.Arguments(fmt.Sprintf(`{"command":%q}`, cmd))}}},
		{Expect: &scripted.Expect{ToolResults: []string{"c1"}}, Text: "Done."},
	}})
	out, errOut, code := runCLI(t, context.Background(), nil, nil, "run", "--exec", "--json", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, greetSkills(t), "Run it.")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if strings.Contains(errOut, "WARNING") {
		t.Errorf("a warning without --local or an opt-in:\n%s", errOut)
	}
	var result string
	for _, raw := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			Kind   string `json:"kind"`
			Result string `json:"result"`
		}
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind == "tool_result" {
			result = l.Result
		}
	}
	var res struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
	}
	if err := json.Unmarshal([]byte(result), &res); err != nil {
		t.Fatalf("%v in the result %q", err, result)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "skills\n") || strings.Contains(res.Stdout, "host-visible") {
		t.Errorf("the command saw %q (exit %d); want the workspace and no host folder", res.Stdout, res.ExitCode)
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{strings.Repeat("é", 12), 10, strings.Repeat("é", 9) + "…"},
	} {
		if got := shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("shorten(%q, %d) = %q; want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
