package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/model/openai"
)

// chatPrompt is what chat shows before each line on a terminal.
const chatPrompt = "> "

// chatMaxLine is the longest line chat reads from a pipe or file, in
// bytes: a message, not a document (the model reads documents through the
// skill tools).
const chatMaxLine = 1 << 20

// chatDescription is the length /skills cuts a description to, in
// characters, so that each skill fits on a line or two.
const chatDescription = 100

// errQuit reports that the user left at the prompt: Ctrl-C on an empty
// line, or an interrupt while chat waited for a line.
var errQuit = errors.New("chat: quit at the prompt")

// skillWord is a /word that names a skill, as the conversation layer
// recognises a direct invocation.
var skillWord = regexp.MustCompile(`^/([a-z0-9]+(?:-[a-z0-9]+)*)[.,;:!?)]*$`)

// chatCommands are chat's own commands, each typed as the whole line.
func chatCommands() []string { return []string{"exit", "help", "skills"} }

func newChat(env *Env) *cobra.Command {
	f := &runFlags{sandbox: execFlags{timeout: execMaxTimeout}}
	cmd := &cobra.Command{
		Use:   "chat " + runUsage + " [ROOT...]",
		Short: "Talk to an agent: each line is a turn, the history kept in a session",
		Long: "chat is `skillkit run` line after line: each line read is the user's message of one agent\n" +
			"turn — the model calls the skill tools until it answers — printed as run prints it, its\n" +
			"answer streamed and its usage line last. The session is made once (or continued with\n" +
			"--session ID) and kept in --store, so every turn sees the ones before it, and a later\n" +
			"chat, run or session command can go on with it. The model, the store, --exec,\n" +
			"--dump-requests (numbered across the turns), --mode and --max-steps (per turn) are as for\n" +
			"run, where the model is an OpenAI-compatible server (--base-url, else $" + openai.EnvBaseURL + ";\n" +
			"--model, else $" + openai.EnvModel + "; the key from $" + openai.EnvAPIKey + ") or --script FILE.\n\n" +
			"A line holding /NAME invokes the skill NAME directly, as in the library: its instructions\n" +
			"are added after the message, also for a skill hidden from the model\n" +
			"(disable-model-invocation). A line that starts with a /name that is no skill you may\n" +
			"invoke is not sent; chat says why. Chat's own commands, each the whole line:\n" +
			"  /skills  the skills you may invoke, with their descriptions\n" +
			"  /help    these commands\n" +
			"  /exit    leave (so does the end of the input: Ctrl-D on an empty line)\n\n" +
			"On a terminal chat edits the line itself (Backspace, Ctrl-U, the arrows, Home, End), Tab\n" +
			"after / completes a skill or command name (one match is written out, several listed),\n" +
			"Ctrl-C during a turn stops that turn — what was recorded stays — and returns to the\n" +
			"prompt, and Ctrl-C on an empty line leaves; the terminal is restored on every way out.\n" +
			"Ctrl-Z does not suspend chat. Elsewhere (a pipe, a file) lines are read as they are, with\n" +
			"no prompt, and an interrupt (SIGINT) stops the turn in progress or, between turns, ends\n" +
			"the chat.\n\n" +
			"Exit status: 0 when the chat ends, 1 when it could not start (the model, the store, a\n" +
			"request dump) or a turn failed (chat goes on after the error and ends with 1), 130 when\n" +
			"a signal ended it, 2 when the command line is wrong.",
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := newRunner(env, f, cmd, args)
			if err != nil {
				return err
			}
			return r.chat(cmd.Context())
		},
	}
	addRunFlags(cmd, env, f)
	return cmd
}

// lineInput is where chat reads its lines: a terminal, with the line
// editor, or plain lines.
type lineInput interface {
	// readLine returns the next line without its end. It returns io.EOF
	// when the input ends, errQuit when the user leaves at the prompt or
	// intr fires, and ctx's error when ctx ends first.
	readLine(ctx context.Context, intr <-chan struct{}) (string, error)
	// duringTurn watches the input while a turn runs: Ctrl-C typed on a
	// terminal calls cancel, and what else is typed is kept for the next
	// line. The returned func stops watching.
	duringTurn(cancel func()) (stop func())
	// close ends reading; a terminal is restored.
	close()
}

// chat is one `skillkit chat` under way.
type chat struct {
	r  *runner
	s  *started
	in lineInput
	// tty reports that lines come from a terminal.
	tty bool
	// intr receives the interrupts Env.Interrupt delivers.
	intr chan struct{}
	// turns and failed count the turns run and those that failed.
	turns, failed int
}

// chat runs the chat until the input ends, and returns its exit status.
func (r *runner) chat(ctx context.Context) error {
	s, err := r.start(ctx)
	if err != nil {
		return r.report(err)
	}
	defer s.close()
	// A signal that ends the process ends the chat, the terminal
	// restored first.
	ctx, end := context.WithCancel(ctx)
	defer end()
	c := &chat{r: r, s: s, intr: make(chan struct{}, 1)}
	defer r.env.interrupts.handle(func() {
		select {
		case c.intr <- struct{}{}:
		default: // one is pending already
		}
	})()
	in, err := openTerminalInput(r.env.Stdin, end, func() ([]string, []string) { return c.names(ctx) })
	if err != nil {
		return r.report(fmt.Errorf("chat: the terminal: %w", err))
	}
	c.in, c.tty = in, in != nil
	if in == nil {
		c.in = &plainInput{r: r.env.Stdin, lines: make(chan plainLine), done: make(chan struct{})}
	}
	defer c.in.close()
	fmt.Fprintln(r.env.Stdout, s.header)
	if c.tty {
		fmt.Fprintln(r.env.Stderr, "skillkit chat: type a message; /skills lists the skills you may invoke, /help the commands, /exit or Ctrl-D leaves")
	}
	err = c.loop(ctx)
	c.in.close() // the terminal restored before the last words
	if err != nil {
		return r.report(err)
	}
	fmt.Fprintf(r.env.Stderr, "skillkit chat: session %s is kept; continue it with --session %s\n", r.session, r.session)
	if c.failed > 0 {
		fmt.Fprintf(r.env.Stderr, "skillkit chat: %d of %d turns failed (the errors are above)\n", c.failed, c.turns)
		return exitError{runFailedStatus}
	}
	return nil
}

// loop reads lines and runs them until the input ends. Its errors end the
// chat: ctx's end, output that cannot be written, a failed request dump.
func (c *chat) loop(ctx context.Context) error {
	for {
		// An interrupt while no turn runs, even one that came just as
		// the last turn ended, leaves.
		line, err := c.in.readLine(ctx, c.intr)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, errQuit):
			return nil
		case err != nil:
			return err
		}
		msg := strings.TrimSpace(line)
		if msg == "" {
			continue
		}
		exit, handled := c.command(ctx, msg)
		if exit {
			return nil
		}
		if handled {
			continue
		}
		if err := c.turn(ctx, msg); err != nil {
			return err
		}
	}
}

// turn runs one turn with msg. A failed or interrupted turn is reported
// and the chat goes on; what ends the chat is returned.
func (c *chat) turn(ctx context.Context, msg string) error {
	c.turns++
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopKeys := c.in.duringTurn(cancel)
	stopIntr := onSignal(c.intr, cancel)
	out := &transcript{w: c.r.env.Stdout, hideUser: c.tty && c.r.env.stdoutTerminal}
	err := c.r.turn(tctx, c.s.agent, out, msg)
	stopIntr()
	stopKeys()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil || out.err != nil || c.r.dump.failure() != nil:
		return err
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(c.r.env.Stderr, "skillkit chat: turn interrupted%s\n", c.r.recorded())
		return nil
	}
	text, _ := c.r.failure(err)
	fmt.Fprintln(c.r.env.Stderr, text)
	c.failed++
	return nil
}

// onSignal calls f when sig fires, until the returned func is called.
func onSignal(sig <-chan struct{}, f func()) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-sig:
			f()
		case <-done:
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// command runs msg when it is one of chat's commands, and refuses a
// message that starts with a /name no skill the user may invoke answers
// to. exit reports /exit; handled that msg is not to be sent.
func (c *chat) command(ctx context.Context, msg string) (exit, handled bool) {
	first, rest := msg, ""
	if i := strings.IndexFunc(msg, unicode.IsSpace); i >= 0 {
		first, rest = msg[:i], msg[i:]
	}
	w := c.r.env.Stdout
	switch first {
	case "/exit", "/help", "/skills":
		if strings.TrimSpace(rest) != "" {
			fmt.Fprintf(c.r.env.Stderr, "skillkit chat: %s takes nothing after it; type it alone, or start the message with other words\n", first)
			return false, true
		}
		switch first {
		case "/exit":
			return true, true
		case "/help":
			fmt.Fprint(w, chatHelp)
		case "/skills":
			c.listSkills(ctx)
		}
		return false, true
	}
	m := skillWord.FindStringSubmatch(first)
	if m == nil {
		return false, false // not a /name: a path, or just text
	}
	for _, s := range c.s.kit.Skills(ctx).Summaries() {
		if s.Name != m[1] {
			continue
		}
		if !s.UserInvocable {
			fmt.Fprintf(c.r.env.Stderr, "skillkit chat: skill %s is not for you to invoke (user-invocable: false); the model loads it when it needs it, so ask in words\n", s.Name)
			return false, true
		}
		return false, false
	}
	fmt.Fprintf(c.r.env.Stderr, "skillkit chat: no skill or command /%s; /skills lists the skills you may invoke, /help the commands\n", m[1])
	return false, true
}

// chatHelp is what /help prints.
const chatHelp = `Type a message and press Enter: the agent answers it, calling the skill tools as it needs.
  /NAME TEXT  invoke the skill NAME directly with your message (Tab after / completes the name)
  /skills     the skills you may invoke
  /help       this help
  /exit       leave (or Ctrl-D on an empty line)
Ctrl-C stops the answer in progress (what was recorded stays); on an empty line it leaves.
`

// listSkills prints the skills the user may invoke.
func (c *chat) listSkills(ctx context.Context) {
	tw := tabwriter.NewWriter(c.r.env.Stdout, 0, 4, 2, ' ', 0)
	n := 0
	for _, s := range c.s.kit.Skills(ctx).Summaries() {
		if !s.UserInvocable {
			continue
		}
		n++
		note := ""
		if !s.ModelInvocable {
			note = " (only you can invoke it)"
		}
		fmt.Fprintf(tw, "/%s\t%s%s\n", s.Name, shorten(oneLine(s.Description), chatDescription), note)
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintln(c.r.env.Stderr, "skillkit chat: no skill of this session may be invoked by the user")
	}
}

// names returns what Tab completes: chat's commands and the skills the
// user may invoke.
func (c *chat) names(ctx context.Context) (commands, skills []string) {
	for _, s := range c.s.kit.Skills(ctx).Summaries() {
		if s.UserInvocable {
			skills = append(skills, s.Name)
		}
	}
	return chatCommands(), skills
}

// plainInput reads lines from a pipe or a file, as they are.
type plainInput struct {
	r     io.Reader
	lines chan plainLine
	// done ends the reader, which otherwise waits to hand over a line.
	done  chan struct{}
	start sync.Once
	stop  sync.Once
}

// plainLine is one line read, or the error that ended the input.
type plainLine struct {
	text string
	err  error
}

func (p *plainInput) readLine(ctx context.Context, intr <-chan struct{}) (string, error) {
	// Read in the background, so that an interrupt or ctx's end is seen
	// while the input is silent.
	p.start.Do(func() { go p.read() })
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", io.EOF
		}
		return l.text, l.err
	case <-intr:
		return "", errQuit
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// read hands over each line of the input, then closes lines.
func (p *plainInput) read() {
	defer close(p.lines)
	sc := bufio.NewScanner(p.r)
	sc.Buffer(nil, chatMaxLine)
	send := func(l plainLine) bool {
		select {
		case p.lines <- l:
			return true
		case <-p.done:
			return false
		}
	}
	for sc.Scan() {
		if !send(plainLine{text: sc.Text()}) {
			return
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		send(plainLine{err: fmt.Errorf("chat: a line of the input is longer than %d bytes; give the model long text as a file it reads with the skill tools", chatMaxLine)})
	} else if err != nil {
		send(plainLine{err: fmt.Errorf("chat: reading the input: %w", err)})
	}
}

// duringTurn does nothing: a pipe has no keys to watch; an interrupt
// comes as a signal.
func (p *plainInput) duringTurn(func()) func() { return func() {} }

func (p *plainInput) close() { p.stop.Do(func() { close(p.done) }) }
