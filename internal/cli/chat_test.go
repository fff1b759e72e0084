package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// chatSkills writes greetSkills' tree with three skills more: one hidden
// from the model that the user invokes (release-notes, as the bundled
// one), one the user may not invoke, and one whose name shares a prefix
// with greet.
func chatSkills(t *testing.T) string {
	t.Helper()
	root := greetSkills(t)
	writeSkill(t, root, "release-notes", "---\nname: release-notes\ndescription: Draft release notes from the commits since the last tag.\ndisable-model-invocation: true\n---\n# Release notes\n\nGroup the commits by kind.\n")
	writeSkill(t, root, "model-only", "---\nname: model-only\ndescription: Internal helper the model loads itself.\nuser-invocable: false\n---\n# Model only\n")
	writeSkill(t, root, "greet-formally", "---\nname: greet-formally\ndescription: Greet people formally, by title and family name.\n---\n# Formal greeting\n")
	return root
}

// waiter blocks until text shows up in a syncBuffer, or the command has
// ended.
type waiter struct {
	b    *syncBuffer
	mu   sync.Mutex
	cond *sync.Cond
	done bool
}

// watch makes a buffer whose text can be waited for.
func watch() *waiter {
	w := &waiter{b: &syncBuffer{}}
	w.cond = sync.NewCond(&w.mu)
	w.b.onWrite = func(string) {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	}
	return w
}

// end wakes the waits: nothing more will be written.
func (w *waiter) end() {
	w.mu.Lock()
	w.done = true
	w.cond.Broadcast()
	w.mu.Unlock()
}

// wait blocks until text occurs n times, and fails the test when the
// command ended first.
func (w *waiter) wait(t *testing.T, text string, n int) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for strings.Count(w.b.String(), text) < n {
		if w.done {
			t.Fatalf("the command ended before %q showed %d times:\n%s", text, n, w.b.String())
		}
		w.cond.Wait()
	}
}

// chatRun is `skillkit chat` running in the background.
type chatRun struct {
	out, err  *waiter
	interrupt chan os.Signal
	code      chan int
}

// startChat runs `skillkit ARGS` with stdin, an interrupt channel and
// watched output.
func startChat(t *testing.T, ctx context.Context, stdin io.Reader, args ...string) *chatRun {
	t.Helper()
	c := &chatRun{out: watch(), err: watch(), interrupt: make(chan os.Signal), code: make(chan int, 1)}
	env := Env{Stdin: stdin, Stdout: c.out.b, Stderr: c.err.b, Getenv: func(string) string { return "" }, Cwd: t.TempDir(), Interrupt: c.interrupt}
	go func() {
		code := Run(ctx, args, env)
		c.out.end()
		c.err.end()
		c.code <- code
	}()
	return c
}

// chatLines runs a chat over the given input lines and returns its output.
func chatLines(t *testing.T, lines string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	c := startChat(t, context.Background(), strings.NewReader(lines), append([]string{"chat"}, args...)...)
	code = <-c.code
	return c.out.b.String(), c.err.b.String(), code
}

// contents returns the content of each message of a request.
func contents(ex openaitest.Exchange) []string {
	var out []string
	for _, m := range ex.Request.Messages {
		out = append(out, m.Content)
	}
	return out
}

// Three lines in one chat over real HTTP: a turn with a tool call, a
// direct invocation of a skill hidden from the model, /exit; the second
// turn's request carries the first turn, and nothing after /exit is read.
func TestChatLines(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Expect: &scripted.Expect{LastRole: "user", LastContains: "Greet Ada"}, Calls: []scripted.Call{{ID: "c1", Name: "skill_load", Arguments: `{"skill":"greet"}`}}},
		{Expect: &scripted.Expect{ToolResults: []string{"c1"}}, Text: "Hello, Ada!"},
		{Expect: &scripted.Expect{LastContains: "Group the commits by kind."}, Text: "Here are the notes."},
	}})
	store := filepath.Join(t.TempDir(), "s.db")
	out, errOut, code := chatLines(t, "Greet Ada, please.\n\n/release-notes for v1.2\n/exit\nnever sent\n",
		"--store", store, "--model", "test-model", "--base-url", srv.URL, chatSkills(t))
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	played(t, srv)
	id := sessionOf(t, errOut)
	ex := srv.Exchanges()
	if len(ex) != 3 {
		t.Fatalf("%d requests; want 3", len(ex))
	}
	third := contents(ex[2])
	for _, want := range []string{"Greet Ada, please.", "Hello, Ada!", "/release-notes for v1.2"} {
		if !slices.Contains(third, want) {
			t.Errorf("the second turn's request lacks %q: %q", want, third)
		}
	}
	if !strings.Contains(strings.Join(third, "\n"), `<skill_content name="release-notes">`) {
		t.Errorf("the second turn's request lacks the invoked skill's block: %q", third)
	}
	want := regexp.MustCompile(`^model: test-model at .*\nuser: Greet Ada, please\.\n→ skill_load \{"skill":"greet"\}\n← loaded: greet\nassistant: Hello, Ada!\ntokens: prompt \d+ \(cached \d+\) completion \d+\nuser: /release-notes for v1\.2\nassistant: Here are the notes\.\ntokens: prompt \d+ \(cached \d+\) completion \d+\n$`)
	if !want.MatchString(out) {
		t.Errorf("transcript:\n%s", out)
	}
	if !strings.HasSuffix(errOut, fmt.Sprintf("skillkit chat: session %s is kept; continue it with --session %s\n", id, id)) {
		t.Errorf("stderr does not end with how to continue:\n%s", errOut)
	}
	if strings.Contains(errOut, "type a message") {
		t.Errorf("the terminal greeting on a pipe:\n%s", errOut)
	}
}

// Chat's own commands and the /names it refuses ask no model.
func TestChatCommands(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{{Text: "unused"}}})
	root := chatSkills(t)
	for _, tc := range []struct {
		name        string
		line        string
		out, errOut []string
		notOut      []string
	}{
		{"skills", "/skills", []string{"/greet ", "/greet-formally ", "/release-notes   Draft release notes from the commits since the last tag. (only you can invoke it)\n"}, nil, []string{"model-only"}},
		{"help", "/help", []string{"/skills     the skills you may invoke\n", "/exit       leave"}, nil, nil},
		{"command with text", "/help me", nil, []string{"skillkit chat: /help takes nothing after it"}, nil},
		{"unknown name", "/nosuch please", nil, []string{"skillkit chat: no skill or command /nosuch; /skills lists the skills you may invoke"}, nil},
		{"unknown name with punctuation", "/nosuch, please", nil, []string{"no skill or command /nosuch;"}, nil},
		{"skill the user may not invoke", "/model-only go", nil, []string{"skillkit chat: skill model-only is not for you to invoke (user-invocable: false)"}, nil},
		{"exit", "/exit", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := chatLines(t, tc.line+"\n", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, root)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			for _, w := range tc.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notOut {
				if strings.Contains(out, w) {
					t.Errorf("stdout holds %q:\n%s", w, out)
				}
			}
			for _, w := range tc.errOut {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
	if n := len(srv.Exchanges()); n != 0 {
		t.Errorf("%d requests for commands; want none", n)
	}
}

// --session continues a chat of the SQLite store in a second invocation:
// its request carries the first chat's turn, and the store holds both.
func TestChatSessionContinues(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Expect: &scripted.Expect{LastContains: "Greet Ada"}, Text: "Hello, Ada!"},
		{Expect: &scripted.Expect{LastContains: "And Grace?"}, Text: "Hello, Grace!"},
	}})
	store := filepath.Join(t.TempDir(), "s.db")
	common := []string{"--store", store, "--model", "test-model", "--base-url", srv.URL}
	_, errOut, code := chatLines(t, "Greet Ada, please.\n", append(common, chatSkills(t))...)
	if code != 0 {
		t.Fatalf("first chat: exit %d, stderr:\n%s", code, errOut)
	}
	id := sessionOf(t, errOut)
	_, errOut, code = chatLines(t, "And Grace?\n", append(common, "--session", id)...)
	if code != 0 {
		t.Fatalf("second chat: exit %d, stderr:\n%s", code, errOut)
	}
	if got := sessionOf(t, errOut); got != id {
		t.Errorf("the second chat recorded to %s; want %s", got, id)
	}
	ex := srv.Exchanges()
	if len(ex) != 2 || !slices.Contains(contents(ex[1]), "Hello, Ada!") || ex[1].Usage.CachedPromptTokens == 0 {
		t.Fatalf("the second chat's request lacks the first turn or reused nothing: %q (usage %+v)", contents(ex[len(ex)-1]), ex[len(ex)-1].Usage)
	}
	st, err := sqlitestore.Open(context.Background(), store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ev := range s.Events {
		if ev.Kind == session.KindUser || ev.Kind == session.KindAssistant {
			texts = append(texts, ev.Text)
		}
	}
	if want := []string{"Greet Ada, please.", "Hello, Ada!", "And Grace?", "Hello, Grace!"}; !slices.Equal(texts, want) {
		t.Errorf("the store holds %q; want %q", texts, want)
	}
	_, errOut, code = chatLines(t, "", append(common, "--session", id, "--mode", "once")...)
	if code != 2 || !strings.Contains(errOut, "skillkit: chat: --mode applies to a new session") {
		t.Errorf("--mode with --session: exit %d, stderr %q", code, errOut)
	}
}

// An interrupt during a turn stops that turn only: what was recorded
// stays, the stalled request is abandoned, and the next line is a turn
// of the same chat. Between turns an interrupt leaves the chat.
func TestChatInterruptedTurn(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Text: "Let me think", Stall: true},
		{Expect: &scripted.Expect{LastContains: "Second question"}, Text: "Answer two."},
	}})
	store := filepath.Join(t.TempDir(), "s.db")
	in, typed := io.Pipe()
	defer typed.Close()
	c := startChat(t, context.Background(), in, "chat", "--store", store, "--model", "test-model", "--base-url", srv.URL, chatSkills(t))
	if _, err := io.WriteString(typed, "First question\n"); err != nil {
		t.Fatal(err)
	}
	c.out.wait(t, "assistant: Let ", 1)
	c.interrupt <- os.Interrupt
	c.err.wait(t, "skillkit chat: turn interrupted; the steps before it are recorded in session ", 1)
	<-srv.ClientGone(1)
	if _, err := io.WriteString(typed, "Second question\n"); err != nil {
		t.Fatal(err)
	}
	c.out.wait(t, "assistant: Answer two.\n", 1)
	typed.Close()
	if code := <-c.code; code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, c.err.b.String())
	}
	if got := strings.Count(c.out.b.String(), "tokens: "); got != 2 {
		t.Errorf("%d usage lines; want one per turn, the interrupted one too:\n%s", got, c.out.b.String())
	}
	ex := srv.Exchanges()
	if len(ex) != 2 {
		t.Fatalf("%d requests; want 2", len(ex))
	}
	second := contents(ex[1])
	if !slices.Contains(second, "First question") || slices.ContainsFunc(second, func(s string) bool { return strings.Contains(s, "Let me think") }) {
		t.Errorf("the next turn's request %q; want the interrupted message and not the unfinished answer", second)
	}
}

// An interrupt while no turn runs leaves the chat, as Ctrl-C on an empty
// line does on a terminal.
func TestChatInterruptBetweenTurns(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{{Text: "unused"}}})
	in, typed := io.Pipe()
	defer typed.Close()
	c := startChat(t, context.Background(), in, "chat", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, chatSkills(t))
	c.out.wait(t, "model: test-model", 1) // printed once interrupts go to the chat
	c.interrupt <- os.Interrupt
	if code := <-c.code; code != 0 || len(srv.Exchanges()) != 0 {
		t.Errorf("exit %d after %d requests, stderr %q; want 0 and none", code, len(srv.Exchanges()), c.err.b.String())
	}
}

// A chat whose context ends (SIGTERM) stops with exit status 130 and says
// what stays recorded.
func TestChatContextEnds(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{{Text: "Thinking", Stall: true}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, typed := io.Pipe()
	defer typed.Close()
	c := startChat(t, ctx, in, "chat", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, chatSkills(t))
	if _, err := io.WriteString(typed, "Hello\n"); err != nil {
		t.Fatal(err)
	}
	c.out.wait(t, "assistant: Thinking", 1)
	cancel()
	if code := <-c.code; code != 130 || !strings.Contains(c.err.b.String(), "skillkit: interrupted; the steps before it are recorded in session ") {
		t.Errorf("exit %d, stderr %q; want 130 and what stays recorded", code, c.err.b.String())
	}
}

// A failed turn is reported and the chat goes on; it ends with exit
// status 1.
func TestChatFailedTurn(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Error: &scripted.Error{Status: 400, Message: "context too long"}},
		{Text: "Fine now."},
	}})
	out, errOut, code := chatLines(t, "First\nSecond\n", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, chatSkills(t))
	if code != 1 || !strings.Contains(errOut, "skillkit: error: ") || !strings.Contains(errOut, "context too long") ||
		!strings.Contains(errOut, "skillkit chat: 1 of 2 turns failed") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "assistant: Fine now.\n") {
		t.Errorf("the turn after the failure did not run:\n%s", out)
	}
}

// run keeps ending on an interrupt: the context is cancelled, exit 130.
func TestRunInterruptSignal(t *testing.T) {
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{{Text: "Thinking", Stall: true}}})
	c := startChat(t, context.Background(), nil, "run", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, greetSkills(t), "Hello")
	c.out.wait(t, "assistant: Thinking", 1)
	c.interrupt <- os.Interrupt
	if code := <-c.code; code != 130 {
		t.Errorf("exit %d, stderr %q; want 130", code, c.err.b.String())
	}
}

// A skill added, one changed and one removed while a chat runs reach its
// next request, as a replacement catalog, without a restart; the chat says
// so.
func TestChatHotReload(t *testing.T) {
	root := chatSkills(t)
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Expect: &scripted.Expect{LastContains: "first", Contains: []string{"Greet people formally"}, Lacks: []string{"Translate text"}}, Text: "one"},
		{Expect: &scripted.Expect{LastContains: "second", Contains: []string{"Translate text between languages.", "Greet people warmly"}}, Text: "two"},
	}})
	in, feed := io.Pipe()
	c := startChat(t, context.Background(), in, "chat", "--model", "test-model", "--base-url", srv.URL, root)
	fmt.Fprintln(feed, "first")
	c.out.wait(t, "one", 1)
	writeSkill(t, root, "translate", "---\nname: translate\ndescription: Translate text between languages.\n---\n# Translate\n")
	writeSkill(t, root, "greet-formally", "---\nname: greet-formally\ndescription: Greet people warmly, by first name.\n---\n# Warm greeting\n")
	if err := os.RemoveAll(filepath.Join(root, "model-only")); err != nil {
		t.Fatal(err)
	}
	// The watcher may see the three changes in one refresh or in
	// several: wait until the last one is reported.
	c.err.wait(t, "removed model-only", 1)
	errText := c.err.b.String()
	for _, want := range []string{"added translate", "changed greet-formally"} {
		if !strings.Contains(errText, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errText)
		}
	}
	fmt.Fprintln(feed, "second")
	c.out.wait(t, "two", 1)
	feed.Close()
	if code := <-c.code; code != 0 {
		t.Fatalf("exit %d:\n%s", code, c.err.b.String())
	}
	played(t, srv)
	ex := srv.Exchanges()
	// The first request's catalog is never edited: the change is a
	// message of its own.
	if first, second := contents(ex[0]), contents(ex[1]); first[0] != second[0] {
		t.Errorf("the first message changed:\n%q\n%q", first[0], second[0])
	}
}
