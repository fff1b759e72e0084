// Package cli implements the skillkit command line. It lives apart from
// package main so tests can run every command in-process with their own
// streams and environment.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/internal/termtext"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// Env is what a command run sees of its process.
type Env struct {
	// Stdin is the command's standard input.
	Stdin io.Reader
	// Stdout receives the command's output.
	Stdout io.Writer
	// Stderr receives warnings and errors.
	Stderr io.Writer
	// Getenv reads environment variables (SKILLKIT_PATH, HOME).
	Getenv func(string) string
	// Cwd is the working directory; empty means os.Getwd.
	Cwd string
	// IsTerminal reports whether w (Stdout or Stderr) is a terminal. What
	// goes to a terminal is escaped (see termtext), since skill names,
	// descriptions, paths and command output can hold escape sequences;
	// other output is byte-exact. Nil means: w has an Fd method (as an
	// *os.File has) and its descriptor is a terminal.
	IsTerminal func(w io.Writer) bool
	// Interrupt, when set, delivers the process's interrupt signal
	// (SIGINT, Ctrl-C in a terminal) to the command that runs: `skillkit
	// chat` ends the turn in progress and goes on, every other command
	// has its context cancelled. Nil: interrupts reach commands only as
	// the end of Run's context.
	Interrupt <-chan os.Signal

	// interrupts routes Interrupt (Run makes it).
	interrupts *interruptRouter
	// stdoutTerminal reports that Stdout is a terminal (escapeTerminals
	// wraps it, so the wrapper no longer says).
	stdoutTerminal bool
	// depth is the --depth flag of the commands that search roots (every
	// registration sets it to the default first).
	depth int
	// maxFiles and maxBytes are the per-skill limit flags of the commands
	// that read skills, when limitFlags says they were registered
	// (addLimitFlags).
	maxFiles   int
	maxBytes   int64
	limitFlags bool
	// listFiles is set by a command that lists every skill's files
	// (registry.Options.ListFiles).
	listFiles bool
	// mcp is the --from-mcp flag of the commands that take it; Run
	// disconnects its servers at the end.
	mcp fromMCP
}

// addDepthFlag gives cmd the --depth flag.
func addDepthFlag(cmd *cobra.Command, env *Env) {
	cmd.Flags().IntVar(&env.depth, "depth", source.DefaultMaxDepth, "search each ROOT this many folder levels deep for skills")
}

// searchDepth returns the --depth flag, checked.
func (env *Env) searchDepth() (int, error) {
	if env.depth <= 0 {
		return 0, fmt.Errorf("--depth is %d; give a positive number of folder levels (the default is %d)", env.depth, source.DefaultMaxDepth)
	}
	return env.depth, nil
}

// isTerminal applies Env.IsTerminal or its default.
func (env *Env) isTerminal(w io.Writer) bool {
	if env.IsTerminal != nil {
		return env.IsTerminal(w)
	}
	f, ok := w.(interface{ Fd() uintptr })
	return ok && termtext.IsTerminal(f.Fd())
}

// escapeTerminals puts an escaping writer in front of Stdout and Stderr
// where they are terminals; the returned func flushes them.
func (env *Env) escapeTerminals() func() {
	var ws []*termtext.Writer
	for _, out := range []*io.Writer{&env.Stdout, &env.Stderr} {
		if *out != nil && env.isTerminal(*out) {
			w := termtext.NewWriter(*out)
			ws = append(ws, w)
			*out = w
			env.stdoutTerminal = env.stdoutTerminal || out == &env.Stdout
		}
	}
	return func() {
		for _, w := range ws {
			w.Flush()
		}
	}
}

// exitError carries a command's exit status without an extra message (the
// command already printed what the user needs).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Run executes the skillkit command line args and returns the exit status.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	defer env.escapeTerminals()()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	env.interrupts = &interruptRouter{cancel: cancel}
	if env.Interrupt != nil {
		done := make(chan struct{})
		defer close(done)
		go env.interrupts.forward(env.Interrupt, done)
	}
	root := newRoot(&env)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	env.mcp.close()
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(env.Stderr, "skillkit: %v\n", err)
	return 2
}

// interruptRouter hands each interrupt to the handler a command set, or
// cancels the command's context when none is set.
type interruptRouter struct {
	cancel context.CancelFunc

	mu      sync.Mutex
	handler func()
}

// forward routes the interrupts of in until done is closed.
func (ir *interruptRouter) forward(in <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-in:
			ir.mu.Lock()
			h := ir.handler
			ir.mu.Unlock()
			if h == nil {
				h = ir.cancel
			}
			h()
		case <-done:
			return
		}
	}
}

// handle makes h receive the interrupts until the returned func is
// called, which restores cancelling.
func (ir *interruptRouter) handle(h func()) (restore func()) {
	ir.mu.Lock()
	defer ir.mu.Unlock()
	ir.handler = h
	return func() {
		ir.mu.Lock()
		defer ir.mu.Unlock()
		ir.handler = nil
	}
}

func newRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "skillkit",
		Short: "Agent Skills for every agent: validate, list, catalog, show and count skills",
		Long: "skillkit parses, validates and serves Agent Skills (folders with a SKILL.md).\n\nCommands that take ROOT arguments read skills from those folders (a folder of skills,\nor one skill folder), or from .zip, .tar and .tar.gz archives of them (http(s) URLs or\nfiles, cached in $SKILLKIT_CACHE_DIR). Without ROOTs they search $SKILLKIT_PATH\n(colon-separated; URLs allowed), the project's .agents/skills and ~/.agents/skills,\nbest rank first.\n\n" +
			"On a terminal, control characters in the output (escape sequences, C1 controls,\n" +
			"bidirectional overrides, invalid UTF-8) are shown escaped, as \\x1b or \\u202e, since\n" +
			"skills and commands choose that text; redirected output is byte-exact.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newSession(env), newRun(env), newChat(env), newValidate(env), newList(env), newCatalog(env), newShow(env), newTokens(env), newExec(env), newBench(env), newServe(env), newInstall(env))
	return root
}

// workDir is the directory commands resolve relative paths against.
func (env *Env) workDir() (string, error) {
	if env.Cwd != "" {
		return env.Cwd, nil
	}
	return os.Getwd()
}

// defaultRoots finds the default skill roots for the working directory and
// prints the warnings about configured roots that are missing.
func (env *Env) defaultRoots(ctx context.Context) ([]source.Source, error) {
	cwd, err := env.workDir()
	if err != nil {
		return nil, err
	}
	srcs, warnings, err := source.DefaultRootsURL(cwd, env.Getenv, env.Getenv("HOME"), env.openURLRoot(ctx))
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintf(env.Stderr, "skillkit: warning: %s\n", w)
	}
	if len(srcs) == 0 {
		searched := "$SKILLKIT_PATH (unset or empty)"
		if v := env.Getenv("SKILLKIT_PATH"); v != "" {
			searched = fmt.Sprintf("$SKILLKIT_PATH (%s)", v)
		}
		searched += ", " + filepath.Join(source.ProjectRoot(cwd), ".agents", "skills")
		if home := env.Getenv("HOME"); home != "" {
			searched += ", " + filepath.Join(home, ".agents", "skills")
		}
		fmt.Fprintf(env.Stderr, "skillkit: warning: no skill roots found: none of %s exists; give a ROOT argument or create one of these folders\n", searched)
	}
	return srcs, nil
}

// rootSources returns the sources of the ROOT arguments (or the default
// roots), searched --depth deep. A ROOT that is a URL or an archive file
// is an archive source (openRoot).
func (env *Env) rootSources(ctx context.Context, roots []string) ([]source.Source, error) {
	depth, err := env.searchDepth()
	if err != nil {
		return nil, err
	}
	var sources []source.Source
	if len(roots) == 0 {
		if sources, err = env.defaultRoots(ctx); err != nil {
			return nil, err
		}
	}
	for i, r := range roots {
		src, err := env.openRoot(ctx, r, i)
		if err != nil {
			return nil, fmt.Errorf("argument ROOT: %w", err)
		}
		sources = append(sources, src)
	}
	for i := range sources {
		sources[i].MaxDepth = depth
	}
	return sources, nil
}

// openRegistry builds a registry over the given roots (or the default
// roots), with the per-skill limits of the flags, and prints discovery
// diagnostics to stderr.
func openRegistry(ctx context.Context, env *Env, roots []string) (*registry.Registry, error) {
	opts, err := env.registryOptions()
	if err != nil {
		return nil, err
	}
	sources, err := env.rootSources(ctx, roots)
	if err != nil {
		return nil, err
	}
	remote, err := env.mcp.sources(ctx, env, len(sources))
	if err != nil {
		return nil, err
	}
	sources = append(sources, remote...)
	reg, err := registry.New(ctx, sources, opts)
	if err != nil {
		return nil, err
	}
	printDiagnostics(env.Stderr, reg.Snapshot().Diagnostics())
	return reg, nil
}

func printDiagnostics(w io.Writer, diags []skill.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintln(w, d.String())
	}
}

// printJSON writes v as indented JSON. HTML characters stay as they are:
// the output is read by people and programs, not embedded in pages.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
