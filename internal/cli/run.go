package cli

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
	rootwatch "github.com/skillkit/skillkit/watch"
)

// Exit statuses of `skillkit run` besides 0 (an answer) and 2 (a wrong
// command line).
const (
	// runFailedStatus: the run started and failed (the model, the store,
	// the step limit, a request dump).
	runFailedStatus = 1
	// runInterruptedStatus: the run was cancelled (Ctrl-C), as shells
	// report SIGINT.
	runInterruptedStatus = 130
)

// Lengths the transcript cuts a tool call's arguments and a result's
// first line to, in characters, so that each fits on a line or two.
const (
	transcriptArgs   = 120
	transcriptResult = 200
)

// runFlags holds the flags of `skillkit run`.
type runFlags struct {
	model, baseURL string
	script         string
	session        string
	store          string
	dump           string
	mode           string
	maxSteps       int
	asJSON         bool
	exec           bool
	// contextWindow is --context-window, the model's context window in
	// tokens (0: unknown), which sizes the catalog's budget.
	contextWindow int
	// sandbox holds --local, --network and the isolated sandbox's
	// opt-ins, as `skillkit exec` takes them.
	sandbox execFlags
}

// runUsage is the synopsis of the flags addRunFlags gives.
const runUsage = "[--model M] [--base-url URL] [--script FILE] [--session ID] [--store PATH] [--dump-requests DIR] [--exec [--local] [--network]] [--mode once|turn|session] [--max-steps N] [--context-window N]"

func newRun(env *Env) *cobra.Command {
	f := &runFlags{sandbox: execFlags{timeout: execMaxTimeout}}
	cmd := &cobra.Command{
		Use:   "run " + runUsage + " [--json] [ROOT...] PROMPT",
		Short: "Run one agent turn: PROMPT as the user's message, the model's tool calls run until it answers",
		Long: "run records PROMPT as the user's message in a session, then asks the model, runs the skill\n" +
			"tools it calls and asks again, until it answers without calling a tool or --max-steps\n" +
			"requests were made. Skills come from the ROOTs (or the default roots); the last argument is\n" +
			"PROMPT (put -- before a PROMPT that starts with -).\n\n" +
			"The model is an OpenAI-compatible Chat Completions server: --base-url (else $" + openai.EnvBaseURL + ",\n" +
			"e.g. https://api.openai.com/v1 or http://localhost:8000/v1) and --model (else $" + openai.EnvModel + ");\n" +
			"the API key is read from $" + openai.EnvAPIKey + " only, never from a flag, since arguments are seen\n" +
			"by every user of the machine. Answers are streamed. --script FILE replays a model/scripted\n" +
			"JSON script instead: no network, no key, and the transcript says so.\n\n" +
			"The session is kept in --store (default: the store of `skillkit session`,\n" +
			"$XDG_STATE_HOME/skillkit/sessions.db, else ~/.local/state/skillkit/sessions.db) for the agent\n" +
			"\"" + defaultAgent + "\". Its ID is printed on stderr; --session ID continues it (it must exist: list them\n" +
			"with `skillkit session ls`) with the roots and --mode it was made with, and every\n" +
			"`skillkit session` command reads it. A new session's --mode is the load lifetime: once, turn\n" +
			"(default) or session. What was recorded before a failure or Ctrl-C stays recorded: each\n" +
			"step, an answer with the results of its calls, is stored whole or not at all.\n\n" +
			"--exec gives the model workspace_exec, which runs commands in the session's workspace in\n" +
			"the isolated sandbox, as `skillkit exec` does (--network, --unbounded-disk and\n" +
			"--allow-downgrade as there); --local runs them UNCONFINED instead (trusted skills only).\n\n" +
			"--dump-requests DIR writes each request body to DIR/0001.json, DIR/0002.json, … in request\n" +
			"order, exactly the bytes sent; a request that is retried is sent again with the same bytes\n" +
			"and written once. With --script, nothing is sent: each file holds the body the\n" +
			"OpenAI-compatible adapter would send for that request, for --model (else $" + openai.EnvModel + ", else\n" +
			"\"" + scripted.DefaultName + "\"). DIR is created when missing; one that already holds such files is refused.\n\n" +
			"Output: a transcript — user: PROMPT, each tool call as → NAME ARGUMENTS (cut at " + fmt.Sprint(transcriptArgs) + "\n" +
			"characters), each result as ← and its first line (cut at " + fmt.Sprint(transcriptResult) + ", \"(error)\" for an error\n" +
			"result), the model's text as assistant: TEXT while it streams — and last one line\n" +
			"tokens: prompt P (cached C) completion K, summed over the requests of the run. --json\n" +
			"prints one JSON object per line and event instead, with the fields kind (user, text,\n" +
			"response, tool_result, answer, error), session, step, text, calls (response: id, name,\n" +
			"arguments), model (response), call (tool_result), result and is_error (tool_result),\n" +
			"loads (tool_result: skill, instructions, inline, docs, lifetime), usage (response: the step's;\n" +
			"answer and error: the run's; prompt_tokens, completion_tokens, cached_tokens) and error\n" +
			"(error); fields that do not apply are left out.\n\n" +
			"Exit status: 0 on an answer; 1 when the run fails (the model's error with the server's\n" +
			"message and what to check, the store, the step limit, a request dump); 130 on Ctrl-C; 2 when\n" +
			"the command line is wrong.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New(`run: no PROMPT; give the user's message as the last argument, e.g. skillkit run ROOT "Summarise data.csv"`)
			}
			roots, prompt := args[:len(args)-1], args[len(args)-1]
			if strings.TrimSpace(prompt) == "" {
				return errors.New(`run: PROMPT is empty; give the user's message as the last argument, e.g. skillkit run ROOT "Summarise data.csv"`)
			}
			r, err := newRunner(env, f, cmd, roots)
			if err != nil {
				return err
			}
			return r.report(r.run(cmd.Context(), prompt))
		},
	}
	addRunFlags(cmd, env, f)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the run's events as JSON lines instead of a transcript")
	return cmd
}

// addRunFlags gives cmd the flags `skillkit run` and `skillkit chat`
// share: the model, the session and its store, execution, request dumps.
func addRunFlags(cmd *cobra.Command, env *Env, f *runFlags) {
	addLimitFlags(cmd, env, false)
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model name (default $"+openai.EnvModel+")")
	fl.StringVar(&f.baseURL, "base-url", "", "API root of the Chat Completions server (default $"+openai.EnvBaseURL+")")
	fl.StringVar(&f.script, "script", "", "replay this model/scripted JSON script instead of asking a server (no network, no key)")
	fl.StringVar(&f.session, "session", "", "continue this session (see skillkit session ls) instead of starting one")
	fl.StringVar(&f.store, "store", defaultStorePath(env), "session store file (SQLite), the one skillkit session uses by default")
	fl.StringVar(&f.dump, "dump-requests", "", "write each request body as DIR/NNNN.json (a retried request once)")
	fl.StringVar(&f.mode, "mode", loadstate.Turn.String(), "load lifetime of a new session: once, turn or session")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "most model requests of a turn")
	fl.BoolVar(&f.exec, "exec", false, "give the model workspace_exec, run in the isolated sandbox (or --local)")
	fl.IntVar(&f.contextWindow, "context-window", 0, "the model's context window in tokens: the catalog takes at most 2% of it (default: at most 8,000 characters)")
	addSandboxFlags(cmd, &f.sandbox)
}

// runner is one `skillkit run` or `skillkit chat`, its command line
// checked.
type runner struct {
	env *Env
	f   *runFlags
	// name is the command's name, run or chat, for its messages.
	name string
	// roots are a new session's roots, absolute (resolveRoots).
	roots []string
	mode  loadstate.Lifetime
	// script is --script resolved against the working directory.
	script string
	// dump is --dump-requests, or nil.
	dump *requestDump

	// session is the ID of the session the run records to, once known.
	session string
}

// newRunner checks the command line (run checks its PROMPT first); its
// errors are the user's to fix (exit status 2).
func newRunner(env *Env, f *runFlags, cmd *cobra.Command, roots []string) (*runner, error) {
	r := &runner{env: env, f: f, name: cmd.Name()}
	if f.contextWindow < 0 {
		return nil, fmt.Errorf("%s: --context-window is %d; give the model's context window in tokens (or leave it out)", cmd.Name(), f.contextWindow)
	}
	if f.maxSteps < 1 {
		return nil, fmt.Errorf("%s: --max-steps is %d; give a positive number of model requests (default %d)", r.name, f.maxSteps, agent.DefaultMaxSteps)
	}
	var err error
	if r.mode, err = loadstate.ParseLifetime(f.mode); err != nil {
		return nil, fmt.Errorf("%s: --mode: %w", r.name, err)
	}
	if f.session != "" {
		if cmd.Flags().Changed("mode") {
			return nil, fmt.Errorf("%s: --mode applies to a new session; session %s keeps the mode it was made with, so drop --mode", r.name, f.session)
		}
		if len(roots) > 0 {
			return nil, fmt.Errorf("%s: ROOT arguments %q apply to a new session; session %s keeps the roots it was made with, so drop the ROOT arguments", r.name, roots, f.session)
		}
	}
	if !f.exec {
		for _, name := range []string{"local", "network", "unbounded-disk", "allow-downgrade"} {
			if cmd.Flags().Changed(name) {
				return nil, fmt.Errorf("%s: --%s only applies with --exec, which gives the model workspace_exec; add --exec or drop --%s", r.name, name, name)
			}
		}
	}
	if f.script != "" {
		r.script = hostPath(env, f.script)
	} else if err := r.checkServer(); err != nil {
		return nil, err
	}
	if f.session == "" {
		// Resolved now, so the session keeps using the same folders.
		if r.roots, err = resolveRoots(cmd.Context(), env, roots); err != nil {
			return nil, err
		}
	}
	if f.dump != "" {
		if r.dump, err = newRequestDump(r.name, hostPath(env, f.dump)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// checkServer says which flag or variable to set when the server's
// address or the model's name is missing.
func (r *runner) checkServer() error {
	switch {
	case cmp.Or(r.f.model, r.env.Getenv(openai.EnvModel)) == "":
		return fmt.Errorf("%s: no model name: pass --model NAME or set %s (or --script FILE to replay a script without a server)", r.name, openai.EnvModel)
	case cmp.Or(r.f.baseURL, r.env.Getenv(openai.EnvBaseURL)) == "":
		return fmt.Errorf("%s: no server: pass --base-url URL or set %s to the API root, such as %s or http://localhost:8000/v1 (or --script FILE to replay a script without a server)", r.name, openai.EnvBaseURL, openai.DefaultBaseURL)
	}
	return nil
}

// model returns the model the run asks, and the transcript's line that
// names it.
func (r *runner) model() (model.Model, string, error) {
	name := cmp.Or(r.f.model, r.env.Getenv(openai.EnvModel))
	base := cmp.Or(r.f.baseURL, r.env.Getenv(openai.EnvBaseURL))
	if r.script != "" {
		m, err := scripted.Load(r.script)
		if err != nil {
			return nil, "", fmt.Errorf("--script: %w", err)
		}
		header := fmt.Sprintf("model: scripted, replaying %s (no network)", r.f.script)
		if r.dump == nil {
			return m, header, nil
		}
		// The bodies are the adapter's for the model the run would ask.
		wire, err := openai.New(&openai.Options{BaseURL: base, Model: cmp.Or(name, scripted.DefaultName)})
		if err != nil {
			return nil, "", fmt.Errorf("--dump-requests: %w", err)
		}
		return &dumpingModel{Model: m, wire: wire, dump: r.dump}, header, nil
	}
	o := openai.FromEnv(r.env.Getenv)
	o.Model, o.BaseURL = name, base
	if r.dump != nil {
		o.CaptureRequest = r.dump.capture
	}
	m, err := openai.New(o)
	if err != nil {
		return nil, "", err
	}
	return m, fmt.Sprintf("model: %s at %s", m.Name(), m.BaseURL()), nil
}

// started is what every turn of a run or chat uses: the agent over the
// model, the kit and the session, and the transcript's first line.
type started struct {
	agent  *agent.Agent
	kit    *skillkit.Kit
	header string
	// close closes the kit and the store.
	close func()
}

// start opens the store, the session (made when new) and the kit, and
// makes the agent. Its errors are the run's (exit status 1).
func (r *runner) start(ctx context.Context) (*started, error) {
	m, header, err := r.model()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, &sessionFlags{store: hostPath(r.env, r.f.store)})
	if err != nil {
		return nil, err
	}
	cfg, err := r.config(ctx, st)
	if err != nil {
		st.Close()
		return nil, err
	}
	kit, closeKit, err := r.kit(ctx, st, cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	s := &started{kit: kit, header: header, close: func() { closeKit(); st.Close() }}
	if r.session == "" {
		// Made once the kit stands, so a failed setup leaves no session.
		made, err := st.Create(ctx, "", cfg.meta())
		if err != nil {
			s.close()
			return nil, err
		}
		r.session = made.ID
	}
	fmt.Fprintf(r.env.Stderr, "skillkit %s: session %s (continue it with --session %s)\n", r.name, r.session, r.session)
	if s.agent, err = agent.New(kit, defaultAgent, m, &agent.Options{MaxSteps: r.f.maxSteps, Stream: true}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// run runs the turn. Its errors are the run's (exit status 1 or 130).
func (r *runner) run(ctx context.Context, prompt string) error {
	s, err := r.start(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	return r.turn(ctx, s.agent, r.output(s.header), prompt)
}

// turn runs one turn of the agent with message as the user's, printing
// its events to out as they come and its end (the usage line).
func (r *runner) turn(ctx context.Context, a *agent.Agent, out runOutput, message string) error {
	// A failed dump cancels the request it is for, so no request goes
	// out without its file.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.dump.setCancel(cancel)
	var runErr error
	for ev, err := range a.Run(ctx, r.session, message) {
		if err != nil {
			runErr = err
			break
		}
		if err := out.event(ev); err != nil {
			return err
		}
	}
	// A failed dump ended the run; it is the failure to report, not the
	// cancellation it caused.
	if err := r.dump.failure(); err != nil {
		runErr = err
	}
	if err := out.end(runErr); err != nil {
		return err
	}
	return runErr
}

// kit builds the run's kit over the session's settings and store, with
// workspace_exec when --exec asks; the func closes it and its runner.
func (r *runner) kit(ctx context.Context, st session.Store, cfg sessionConfig) (*skillkit.Kit, func(), error) {
	opts, err := r.env.registryOptions()
	if err != nil {
		return nil, nil, err
	}
	kopts := &skillkit.Options{Sources: sessionSources(ctx, r.env, cfg.Roots), Registry: opts, Store: st, Agent: cfg.agentOptions()}
	if r.f.contextWindow > 0 {
		kopts.Agent.Catalog.Budget = &assembly.CatalogBudget{ContextWindow: r.f.contextWindow}
	}
	noSkills := len(kopts.Sources) == 0
	if noSkills {
		// A kit without sources would search the default roots itself,
		// through the process's environment; a session without roots
		// has no skills (the zero embed.FS holds no file).
		kopts.Sources = []source.Source{source.FS(embed.FS{}, "no skill roots", 0)}
		if r.f.session != "" && len(cfg.Roots) == 0 {
			fmt.Fprintf(r.env.Stderr, "skillkit: warning: session %s was made without skill roots; it has no skills\n", r.session)
		}
	}
	closeRunner := func() {}
	if r.f.exec {
		runner, err := execRunner(r.env, r.f.sandbox, r.name, "every workspace_exec command")
		if err != nil {
			return nil, nil, err
		}
		if err := checkWorkspaceDisk(runner, r.f.sandbox, r.name, "every workspace_exec command", os.TempDir(), "drop --exec to go without commands"); err != nil {
			if c, ok := runner.(io.Closer); ok {
				_ = c.Close()
			}
			return nil, nil, err
		}
		if c, ok := runner.(io.Closer); ok {
			closeRunner = func() { _ = c.Close() }
		}
		kopts.Exec = &skillkit.ExecOptions{Runner: runner, Tool: &tools.ExecOptions{Network: r.f.sandbox.network}}
	}
	kit, err := skillkit.New(ctx, kopts)
	if err != nil {
		closeRunner()
		return nil, nil, err
	}
	if !noSkills {
		printDiagnostics(r.env.Stderr, kit.Registry().Snapshot().Diagnostics())
	}
	stopWatch := func() {}
	if r.name == "chat" && !noSkills {
		// A chat lasts: skills added, changed or removed meanwhile reach
		// the next request (as a replacement catalog).
		last := kit.Registry().Snapshot().Summaries()
		w, err := rootwatch.Start(ctx, kit.Registry(), &rootwatch.Options{
			OnError: func(err error) { fmt.Fprintf(r.env.Stderr, "skillkit chat: warning: %v\n", err) },
			OnChange: func(_ context.Context, snap *registry.Snapshot) {
				now := snap.Summaries()
				if diff := skillsDiff(last, now); diff != "" {
					fmt.Fprintf(r.env.Stderr, "skillkit chat: skills reloaded: %s (%d skills); the next request carries them\n", diff, len(now))
				}
				last = now
			},
		})
		if err != nil {
			fmt.Fprintf(r.env.Stderr, "skillkit chat: warning: %v; skills changed during the chat are not seen\n", err)
		} else {
			stopWatch = func() { _ = w.Close() }
		}
	}
	// The runner outlives the kit, whose commands it runs until it closes.
	return kit, func() {
		stopWatch()
		if err := kit.Close(); err != nil {
			fmt.Fprintf(r.env.Stderr, "skillkit %s: warning: closing the kit (its temporary workspaces): %v\n", r.name, err)
		}
		closeRunner()
	}, nil
}

// config returns the settings of the run's session: those --session was
// made with, or a new session's from the command line.
func (r *runner) config(ctx context.Context, st session.Store) (sessionConfig, error) {
	if r.f.session == "" {
		return sessionConfig{Roots: r.roots, Lifetime: r.mode, Placement: assembly.PlacementToolResult, Catalog: assembly.FormatReminder}, nil
	}
	s, err := st.Get(ctx, r.f.session)
	if errors.Is(err, session.ErrNotFound) {
		return sessionConfig{}, fmt.Errorf("--session %s: no such session in %s; list them with `skillkit session ls --store %s`, or drop --session to start one", r.f.session, r.f.store, r.f.store)
	}
	if err != nil {
		return sessionConfig{}, err
	}
	r.session = s.ID
	return configOf(s)
}

// report prints the run's error, if any, and returns the exit status to
// end with.
func (r *runner) report(err error) error {
	if err == nil {
		return nil
	}
	msg, code := r.failure(err)
	fmt.Fprintln(r.env.Stderr, msg)
	return exitError{code}
}

// failure is the message that explains err, a failed run's or turn's,
// and the exit status it ends a run with.
func (r *runner) failure(err error) (string, int) {
	switch {
	case errors.Is(err, context.Canceled):
		return "skillkit: interrupted" + r.recorded(), runInterruptedStatus
	case errors.Is(err, agent.ErrMaxSteps):
		return fmt.Sprintf("skillkit: error: the model still called tools after %s, the step limit%s; raise it with --max-steps N, or continue with --session %s", requestsWord(r.f.maxSteps), r.recorded(), r.session), runFailedStatus
	}
	return fmt.Sprintf("skillkit: error: %v", err), runFailedStatus
}

// requestsWord counts model requests in words: "1 request", "3 requests".
func requestsWord(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}

// recorded says where what the run recorded is kept.
func (r *runner) recorded() string {
	if r.session == "" {
		return ""
	}
	return fmt.Sprintf("; the steps before it are recorded in session %s", r.session)
}

// output returns the writer of the run's events: the transcript, or JSON
// lines with --json.
func (r *runner) output(header string) runOutput {
	if r.f.asJSON {
		enc := json.NewEncoder(r.env.Stdout)
		enc.SetEscapeHTML(false)
		return &jsonOutput{enc: enc, session: r.session}
	}
	return &transcript{w: r.env.Stdout, header: header}
}

// runOutput prints a run's events as they come, and its end.
type runOutput interface {
	// event prints one event.
	event(ev agent.Event) error
	// end prints what follows the last event; err is the run's failure
	// or nil.
	end(err error) error
}

// transcript prints a run for people to read.
type transcript struct {
	w io.Writer
	// header names the model; it is printed before the first event.
	header string
	// hideUser leaves out the user: line, for a chat on a terminal,
	// where the line just typed shows the message already.
	hideUser bool
	// open reports that streamed text is being written on the current
	// line.
	open  bool
	usage model.Usage
	err   error // the first write error
}

func (t *transcript) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// printHeader prints the header once, before whatever comes first.
func (t *transcript) printHeader() {
	if t.header != "" {
		t.printf("%s\n", t.header)
		t.header = ""
	}
}

func (t *transcript) event(ev agent.Event) error {
	t.printHeader()
	switch ev.Kind {
	case agent.KindUser:
		if !t.hideUser {
			t.printf("user: %s\n", ev.Text)
		}
	case agent.KindText:
		if !t.open {
			t.printf("assistant: ")
			t.open = true
		}
		t.printf("%s", ev.Text)
	case agent.KindResponse:
		t.usage = t.usage.Add(ev.Usage)
		switch {
		case t.open:
			t.printf("\n")
			t.open = false
		case ev.Record.Text != "":
			// Text that did not stream, such as a refusal.
			t.printf("assistant: %s\n", ev.Record.Text)
		}
	case agent.KindToolResult:
		t.printf("→ %s %s\n", ev.Call.Name, shorten(oneLine(ev.Call.Arguments), transcriptArgs))
		mark := ""
		if ev.Result.IsError {
			mark = "(error) "
		}
		first, _, more := strings.Cut(ev.Result.Text, "\n")
		line := shorten(first, transcriptResult)
		if more && !strings.HasSuffix(line, "…") {
			line += " …"
		}
		t.printf("← %s%s\n", mark, line)
	}
	return t.err
}

func (t *transcript) end(error) error {
	t.printHeader()
	if t.open {
		t.printf("\n")
	}
	t.printf("tokens: prompt %d (cached %d) completion %d\n", t.usage.PromptTokens, t.usage.CachedPromptTokens, t.usage.CompletionTokens)
	return t.err
}

// oneLine collapses each run of white space in s, line breaks included,
// to one space, so pretty-printed arguments fit on the line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// shorten cuts s to n characters, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
			break
		}
		count++
	}
	return s[:i] + "…"
}

// jsonOutput prints a run as one JSON object per event.
type jsonOutput struct {
	enc     *json.Encoder
	session string
	usage   model.Usage
}

// eventJSON is the line --json prints for an event. The field names are
// documented in the command's help; they stay as they are.
type eventJSON struct {
	// Kind is the event's kind: user, text, response, tool_result,
	// answer, or error for a failed run's last line.
	Kind string `json:"kind"`
	// Session is the session's ID.
	Session string `json:"session"`
	// Step is the model request the event belongs to, 1 for the first.
	Step int `json:"step,omitempty"`
	// Text is the user's message, a streamed piece, the response's or
	// the answer's text.
	Text string `json:"text,omitempty"`
	// Model is the model that answered (response).
	Model string `json:"model,omitempty"`
	// Calls are the response's tool calls.
	Calls []session.ToolCall `json:"calls,omitempty"`
	// Call is the call a tool_result answers.
	Call *session.ToolCall `json:"call,omitempty"`
	// Result is the tool result's text as recorded: a load's stored stub
	// ("loaded: NAME"), to which the request adds the loaded content
	// (see the loads field).
	Result *string `json:"result,omitempty"`
	// IsError marks an error result.
	IsError bool `json:"is_error,omitempty"`
	// Loads are what a tool result loaded.
	Loads []session.Load `json:"loads,omitempty"`
	// Usage is a response's own, or the run's on answer and error.
	Usage *model.Usage `json:"usage,omitempty"`
	// Error is why the run failed (error).
	Error string `json:"error,omitempty"`
}

func (j *jsonOutput) event(ev agent.Event) error {
	j.session = ev.SessionID
	line := eventJSON{Kind: ev.Kind.String(), Session: ev.SessionID, Step: ev.Step, Text: ev.Text, Loads: ev.Loads}
	switch ev.Kind {
	case agent.KindResponse:
		j.usage = j.usage.Add(ev.Usage)
		line.Text, line.Model, line.Calls, line.Usage = ev.Record.Text, ev.Response.Model, ev.Record.ToolCalls, &ev.Usage
	case agent.KindToolResult:
		line.Call, line.Result, line.IsError = &ev.Call, &ev.Result.Text, ev.Result.IsError
	case agent.KindAnswer:
		line.Usage = &ev.Usage
	}
	return j.enc.Encode(line)
}

func (j *jsonOutput) end(err error) error {
	if err == nil {
		return nil
	}
	return j.enc.Encode(eventJSON{Kind: "error", Session: j.session, Usage: &j.usage, Error: err.Error()})
}

// dumpName is the name of a request dump file.
var dumpName = regexp.MustCompile(`^[0-9]{4,}\.json$`)

// requestDump writes request bodies to DIR/0001.json, DIR/0002.json, …
// in request order, across every turn of a run or chat.
type requestDump struct {
	dir string

	mu     sync.Mutex
	n      int   // files written
	err    error // the first failure
	cancel context.CancelFunc
}

// newRequestDump makes dir when it is missing and refuses one that holds
// dump files already, so no file of an earlier run is overwritten or
// mixed with this run's.
func newRequestDump(cmd, dir string) (*requestDump, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: --dump-requests: %w", cmd, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: --dump-requests: %w", cmd, err)
	}
	for _, e := range entries {
		if dumpName.MatchString(e.Name()) {
			return nil, fmt.Errorf("%s: --dump-requests %s already holds %s from an earlier run; pick an empty folder", cmd, dir, e.Name())
		}
	}
	return &requestDump{dir: dir}, nil
}

// setCancel makes a failed write cancel the turn of cancel, the one whose
// request it was for (nothing for a nil d).
func (d *requestDump) setCancel(cancel context.CancelFunc) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cancel = cancel
}

// write writes the next file. A file that appeared since the check is not
// overwritten.
func (d *requestDump) write(body []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	d.n++
	p := filepath.Join(d.dir, fmt.Sprintf("%04d.json", d.n))
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(body)
		err = errors.Join(err, f.Close())
	}
	if errors.Is(err, os.ErrExist) {
		err = fmt.Errorf("%s appeared while the run wrote its requests; pick an empty folder", p)
	}
	if err != nil {
		d.err = fmt.Errorf("--dump-requests: %w; the request was not sent", err)
		if d.cancel != nil {
			d.cancel()
		}
	}
	return d.err
}

// capture is the adapter's CaptureRequest: the first attempt of each
// request is written, its retries send the same bytes.
func (d *requestDump) capture(attempt int, body []byte) {
	if attempt == 1 {
		_ = d.write(body) // kept in d.err; the cancel stops the request
	}
}

// failure is the first write error, or nil (also for a nil d).
func (d *requestDump) failure() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// dumpingModel is a model that asks no server (a scripted one), with each
// request's body written as the OpenAI-compatible adapter wire would send
// it.
type dumpingModel struct {
	model.Model
	wire *openai.Model
	dump *requestDump
}

// record writes the body of req.
func (m *dumpingModel) record(req *model.Request, stream bool) error {
	body, err := m.wire.RequestBody(req, stream)
	if err != nil {
		return fmt.Errorf("--dump-requests: %w", err)
	}
	return m.dump.write(body)
}

// Generate writes the request's body, then asks the model.
func (m *dumpingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := m.record(req, false); err != nil {
		return nil, err
	}
	return m.Model.Generate(ctx, req)
}

// Stream writes the request's body, then streams the model's answer.
func (m *dumpingModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if err := m.record(req, true); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		for c, err := range m.Model.Stream(ctx, req) {
			if !yield(c, err) {
				return
			}
		}
	}
}

// skillsDiff says which skills were added, removed or changed (their
// catalog entry) from before to now, or "" when none was.
func skillsDiff(before, now []skill.Summary) string {
	old := make(map[string]skill.Summary, len(before))
	for _, s := range before {
		old[s.Name] = s
	}
	var added, changed, removed []string
	for _, s := range now {
		o, ok := old[s.Name]
		switch {
		case !ok:
			added = append(added, s.Name)
		case o != s:
			changed = append(changed, s.Name)
		}
		delete(old, s.Name)
	}
	for name := range old {
		removed = append(removed, name)
	}
	slices.Sort(removed)
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", added}, {"changed", changed}, {"removed", removed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}
