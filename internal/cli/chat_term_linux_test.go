package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/model/scripted"
)

// TestChatTerminal types into chat on a real pseudo-terminal: Tab
// completion (ambiguous: listed; unique: written out; a skill the user
// may not invoke: not offered), a direct invocation, Ctrl-C during a turn
// (the chat goes on), Backspace, and Ctrl-C on the empty line, which
// leaves with the terminal restored.
func TestChatTerminal(t *testing.T) {
	master, slave := openPTY(t)
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{
		{Expect: &scripted.Expect{LastContains: "Group the commits by kind."}, Text: "Notes drafted."},
		{Text: "Hmm", Stall: true},
		{Text: "Done."},
	}})
	screen := watch()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(screen.b, master) // ends with EIO once the slave is closed
		screen.end()
	}()
	c := startChat(t, context.Background(), slave, "chat", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, chatSkills(t))
	typeKeys := func(s string) {
		t.Helper()
		if _, err := master.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	// Raw mode is on once the prompt shows; typed before, the line
	// discipline would echo and hold the keys.
	screen.wait(t, "\r> \x1b[K", 1)
	typeKeys("/mo\t")
	screen.wait(t, "\r> /mo\x1b[K", 2) // typed, then drawn again unchanged by Tab
	typeKeys("\x15/gr\t")
	screen.wait(t, "\r\n/greet  /greet-formally\r\n\r> /greet\x1b[K", 1)
	typeKeys("\x15/rel\t")
	screen.wait(t, "\r> /release-notes \x1b[K", 1)
	typeKeys("now\r")
	c.out.wait(t, "assistant: Notes drafted.\n", 1)
	c.out.wait(t, "tokens: ", 1)

	typeKeys("Think hard\r")
	c.out.wait(t, "assistant: Hmm", 1)
	typeKeys("\x03")
	c.err.wait(t, "skillkit chat: turn interrupted", 1)
	<-srv.ClientGone(2)

	typeKeys("x\x7fAgain\r")
	c.out.wait(t, "assistant: Done.\n", 1)
	// Typed during a turn, Ctrl-C would stop it: this one waits for the
	// prompt the turn's end draws.
	screen.wait(t, "\r> Again\x1b[K\r\n\r> \x1b[K", 1)
	typeKeys("\x03")
	if code := <-c.code; code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, c.err.b.String())
	}
	after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("the terminal was left as %+v; want it restored to %+v", *after, *before)
	}
	slave.Close()
	<-copied

	if err := srv.Done(); err != nil {
		t.Fatal(err)
	}
	ex := srv.Exchanges()
	if got := ex[0].Request.Messages; !strings.Contains(got[len(got)-2].Content, "/release-notes now") {
		t.Errorf("the first request does not carry the completed invocation: %+v", got)
	}
	if got := ex[2].Request.Messages; got[len(got)-1].Content != "Again" {
		t.Errorf("the last request's message is %q; want Backspace applied: Again", got[len(got)-1].Content)
	}
	if strings.Contains(screen.b.String(), "model-only") {
		t.Errorf("Tab offered a skill the user may not invoke:\n%q", screen.b.String())
	}
	if n := strings.Count(c.out.b.String(), "tokens: "); n != 3 {
		t.Errorf("%d usage lines; want one per turn:\n%s", n, c.out.b.String())
	}
	// Stdout is not the terminal, so the transcript keeps the messages.
	if !strings.Contains(c.out.b.String(), "user: /release-notes now\n") {
		t.Errorf("the transcript lacks the typed message:\n%s", c.out.b.String())
	}
}

// With stdout on the terminal as well, the transcript leaves out the
// typed message, which the terminal shows already, and escapes what the
// model sends; Ctrl-D on the empty line leaves.
func TestChatTerminalStdout(t *testing.T) {
	master, slave := openPTY(t)
	srv := newServer(t, &scripted.Script{Steps: []scripted.Step{{Text: "Hi \x1b[31mthere."}}})
	screen := watch()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(screen.b, master)
		screen.end()
	}()
	errb := watch()
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"chat", "--store", filepath.Join(t.TempDir(), "s.db"), "--model", "test-model", "--base-url", srv.URL, chatSkills(t)},
			Env{Stdin: slave, Stdout: slave, Stderr: errb.b, Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
	}()
	screen.wait(t, "\r> \x1b[K", 1)
	if _, err := master.WriteString("hello\r"); err != nil {
		t.Fatal(err)
	}
	screen.wait(t, "tokens: ", 1)
	screen.wait(t, "\r> \x1b[K", 2)
	if _, err := master.WriteString("\x04"); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != 0 {
		t.Fatalf("exit %d, stderr:\n%s", c, errb.b.String())
	}
	slave.Close()
	<-copied
	got := screen.b.String()
	if strings.Contains(got, "user: ") || !strings.Contains(got, `assistant: Hi \x1b[31mthere.`) || strings.Contains(got, "\x1b[31m") {
		t.Errorf("the terminal shows %q; want the answer escaped and no user: line", got)
	}
	if !strings.Contains(errb.b.String(), "skillkit chat: type a message; /skills lists the skills you may invoke") {
		t.Errorf("no greeting on a terminal:\n%s", errb.b.String())
	}
}
