package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/workspace"
	"go.opentelemetry.io/otel/trace"
)

// WorkspaceExecName is the name of the execution tool.
const WorkspaceExecName = "workspace_exec"

// ErrExecConfig wraps every invalid WorkspaceExecConfig or ExecOptions value.
var ErrExecConfig = errors.New("tools: invalid exec configuration")

// ErrExecRequest wraps every invalid ExecRequest (a bad cwd, env key or
// output glob), so callers can tell a refused request from a failed run.
var ErrExecRequest = errors.New("tools: invalid exec request")

// ExecOptions are the operator's settings for commands. A nil *ExecOptions
// means defaults; invalid values are errors.
type ExecOptions struct {
	// MaxTimeout caps the timeout a request asks for; default
	// sandbox.DefaultMaxTimeout. Keep it at or below the runner's own
	// MaxTimeout, which rejects longer timeouts.
	MaxTimeout time.Duration
	// DefaultTimeout applies when a request names none; default
	// sandbox.DefaultTimeout, or MaxTimeout when that is shorter. An
	// explicit value above MaxTimeout is an error.
	DefaultTimeout time.Duration
	// Limits bounds each command's resources (sandbox defaults for zero
	// fields).
	Limits sandbox.Limits
	// Network allows network access in the isolated runner.
	Network bool
	// CollectLimits bounds output file collection (workspace defaults for
	// nil or zero fields).
	CollectLimits *workspace.CollectLimits
	// TracerProvider receives a workspace.run span for each command run
	// (the workspace's own spans go to its Manager's provider). Nil means
	// otel.GetTracerProvider(), a no-op unless the application installed
	// a provider.
	TracerProvider trace.TracerProvider
	// Background bounds the commands workspace_exec starts in the
	// background (WorkspaceExecTools); zero fields mean the defaults.
	Background BackgroundOptions
}

// ExecRequest is one command to run in a workspace.
type ExecRequest struct {
	// Args is the argv, e.g. ["/bin/sh", "-c", command].
	Args []string
	// Dir is the working directory relative to the workspace, with
	// slashes; "" is the workspace itself. Absolute paths and ".."
	// elements are refused. Inside skills/<name> of a skill staged by this
	// request, SKILL_NAME is set to name.
	Dir string
	// Env holds untrusted variables (from a model or a user); keys that
	// change how programs are found or loaded (PATH, HOME, LD_*, ...) and
	// the workspace variables (WORKSPACE_DIR, ...) are refused.
	Env map[string]string
	// Stdin is fed to the command.
	Stdin []byte
	// Timeout bounds the command; zero means ExecOptions.DefaultTimeout,
	// and values above ExecOptions.MaxTimeout are capped to it.
	Timeout time.Duration
	// OutputFiles are doublestar globs relative to the workspace (e.g.
	// "out/**") whose matches are collected after the command.
	OutputFiles []string
	// Skills are staged into skills/<name> before the command runs.
	Skills []string
}

// ExecResult is the outcome of a command, in the JSON shape the
// workspace_exec tool returns and `skillkit exec --json` prints.
type ExecResult struct {
	// ExitCode is the exit status, 128+signal when a signal ended the
	// command, or -1 when no status is known.
	ExitCode int `json:"exit_code"`
	// Stdout is the captured standard output (head and tail when
	// truncated).
	Stdout string `json:"stdout"`
	// Stderr is the captured standard error (head and tail when
	// truncated).
	Stderr string `json:"stderr"`
	// StdoutTruncated reports that part of Stdout was dropped.
	StdoutTruncated bool `json:"stdout_truncated"`
	// StderrTruncated reports that part of Stderr was dropped.
	StderrTruncated bool `json:"stderr_truncated"`
	// TimedOut reports that the deadline (the timeout or the call's
	// context) ended the command.
	TimedOut bool `json:"timed_out"`
	// OOMKilled: the memory bound killed a process of the command.
	OOMKilled bool `json:"oom_killed,omitempty"`
	// DiskLimit: the workspace or /tmp was (nearly) full when it ended.
	DiskLimit bool `json:"disk_limit,omitempty"`
	// DurationMS is the command's wall-clock time in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// OutputFiles holds the collected files; never null.
	OutputFiles []workspace.OutputFile `json:"output_files"`
	// OutputFilesTruncated reports that more files matched than the
	// collection limit allows.
	OutputFilesTruncated bool `json:"output_files_truncated,omitempty"`
	// Notes explain a limit that ended or hampered the command, or a path
	// of a skill that was not staged, in words for the model or user;
	// omitted when there is none.
	Notes []string `json:"notes,omitempty"`
	// Unstaged lists the paths of the staged skills' listings that
	// staging left out (reserved top-level names, links whose target is
	// not staged), so callers can warn; Notes words them too. What the
	// listing itself left out — links leading out of the skill, special
	// files, nested skills, files past the per-skill limits — is in the
	// skill's manifest (registry.Snapshot.Manifest: Skipped, Truncated
	// and the diagnostics), which staging copies (Snapshot.ListedFS), and
	// in Notes.
	Unstaged []Unstaged `json:"-"`
}

// Unstaged is a path of a skill left out of its staged copy.
type Unstaged struct {
	// Skill is the skill's name.
	Skill string
	// Path is the path inside the skill folder, with slashes.
	Path string
	// Reason says why it was left out.
	Reason string
}

// Failed reports whether the command exited non-zero or timed out.
func (r *ExecResult) Failed() bool { return r.ExitCode != 0 || r.TimedOut }

// notes explains the limits a result reports.
func notes(res *sandbox.Result, timeout time.Duration, l sandbox.Limits) []string {
	var n []string
	if res.TimedOut {
		n = append(n, fmt.Sprintf("the command was stopped at its %v timeout (signal %d); ask for a longer timeout_sec or do less per call", timeout, res.Signal))
	}
	if res.OOMKilled {
		mem := l.Memory
		if mem == 0 {
			mem = sandbox.DefaultMemory
		}
		n = append(n, fmt.Sprintf("a process was killed for exceeding the memory limit of %d MiB for all the command's processes together; use less memory", mem>>20))
	}
	if res.DiskLimit {
		n = append(n, "the workspace or /tmp ran out of space or files (disk limit); delete files you no longer need or write less")
	}
	if res.StdoutTruncated || res.StderrTruncated {
		n = append(n, "output was truncated in the middle; write large output to a file under out/ and list it in output_files")
	}
	return n
}

// truncatedNote says that the staged copy of skill name holds only the
// files of its truncated manifest m.
func truncatedNote(name string, m *skill.Manifest) string {
	t := m.Truncated
	what := fmt.Sprintf("%d files", t.Files)
	if t.Limit == "MaxBytes" {
		what = fmt.Sprintf("%d bytes", t.Bytes)
	}
	if t.Partial {
		what = "more than " + what
	}
	return fmt.Sprintf("skill %s holds %s, more than a skill may hold: only %d of its files (%d bytes) were staged in skills/%s; the others are not part of the skill", name, what, len(m.Files), m.Bytes, name)
}

// Executor stages skills, runs one command and collects its outputs in a
// workspace, holding the workspace lock throughout. The workspace_exec tool
// and the `skillkit exec` command share it, so both behave alike.
type Executor struct {
	runner     sandbox.Runner
	maxTimeout time.Duration
	defTimeout time.Duration
	limits     sandbox.Limits
	network    bool
	collect    *workspace.CollectLimits
	tracer     trace.Tracer
}

// NewExecutor returns an Executor running commands with r. A nil r is an
// error: there is no implicit runner, so confinement is always a choice.
func NewExecutor(r sandbox.Runner, opts *ExecOptions) (*Executor, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: Runner is nil; pass sandbox.NewIsolated(nil) (or, for trusted commands only, sandbox.NewUnconfinedLocal)", ErrExecConfig)
	}
	var o ExecOptions
	if opts != nil {
		o = *opts
	}
	e := &Executor{runner: r, maxTimeout: o.MaxTimeout, defTimeout: o.DefaultTimeout,
		limits: o.Limits, network: o.Network, collect: o.CollectLimits, tracer: tracing.Tracer(o.TracerProvider, tracerName)}
	if err := o.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("%w: ExecOptions.%w", ErrExecConfig, err)
	}
	if err := o.CollectLimits.Validate(); err != nil {
		return nil, fmt.Errorf("%w: ExecOptions.CollectLimits: %w", ErrExecConfig, err)
	}
	ceiling, hasCeiling := sandbox.MaxTimeout(r)
	switch {
	case e.maxTimeout < 0:
		return nil, fmt.Errorf("%w: ExecOptions.MaxTimeout is %v; use a positive value or 0 for %v", ErrExecConfig, e.maxTimeout, sandbox.DefaultMaxTimeout)
	case e.maxTimeout == 0:
		e.maxTimeout = sandbox.DefaultMaxTimeout
		if hasCeiling && ceiling < e.maxTimeout {
			e.maxTimeout = ceiling
		}
	case hasCeiling && e.maxTimeout > ceiling:
		return nil, fmt.Errorf("%w: ExecOptions.MaxTimeout %v exceeds the runner's own maximum %v; lower it or raise the runner's MaxTimeout", ErrExecConfig, e.maxTimeout, ceiling)
	}
	switch {
	case e.defTimeout < 0:
		return nil, fmt.Errorf("%w: ExecOptions.DefaultTimeout is %v; use a positive value or 0 for %v", ErrExecConfig, e.defTimeout, sandbox.DefaultTimeout)
	case e.defTimeout > e.maxTimeout:
		return nil, fmt.Errorf("%w: ExecOptions.DefaultTimeout %v exceeds MaxTimeout %v; lower it or raise MaxTimeout", ErrExecConfig, e.defTimeout, e.maxTimeout)
	case e.defTimeout == 0:
		e.defTimeout = min(sandbox.DefaultTimeout, e.maxTimeout)
	}
	return e, nil
}

// MaxTimeout returns the cap applied to ExecRequest.Timeout.
func (e *Executor) MaxTimeout() time.Duration { return e.maxTimeout }

// Exec locks ws, stages req.Skills from snap, runs the command and collects
// req.OutputFiles. A non-nil error means the command did not run as asked
// (invalid request wrapping ErrExecRequest, staging, sandbox or collection
// failure); a command that ran and failed is reported in the result.
func (e *Executor) Exec(ctx context.Context, ws *workspace.Workspace, snap *registry.Snapshot, req ExecRequest) (*ExecResult, error) {
	st, err := e.stage(ctx, ws, snap, req, e.defTimeout, e.maxTimeout)
	if err != nil {
		return nil, err
	}
	defer st.unlock()
	res, err := e.runCommand(ctx, ws, st.run, st.spec)
	var lost []string
	if errors.Is(err, sandbox.ErrCommandLost) && res != nil && ctx.Err() == nil {
		// The command's own doing, most likely (it killed or stopped
		// what ran it): a result, with what it printed until then.
		lost, err = []string{detail(err, sandbox.ErrCommandLost)}, nil
	}
	if err != nil {
		return nil, err
	}
	out := &ExecResult{
		ExitCode:        res.ExitCode,
		Stdout:          string(res.Stdout),
		Stderr:          string(res.Stderr),
		StdoutTruncated: res.StdoutTruncated,
		StderrTruncated: res.StderrTruncated,
		TimedOut:        res.TimedOut,
		OOMKilled:       res.OOMKilled,
		DiskLimit:       res.DiskLimit,
		DurationMS:      res.Duration.Milliseconds(),
		OutputFiles:     []workspace.OutputFile{},
		Notes:           append(append(st.notes, lost...), notes(res, st.spec.Timeout, e.limits)...),
		Unstaged:        st.unstaged,
	}
	if len(req.OutputFiles) > 0 {
		col, err := ws.Collect(ctx, req.OutputFiles, e.collect)
		if err != nil {
			return nil, fmt.Errorf("tools: collect output_files: %w", err)
		}
		out.OutputFiles = col.Files
		out.OutputFilesTruncated = col.Truncated
	}
	return out, nil
}

// staged is a checked request whose skills are staged in a workspace that
// stays locked until unlock.
type staged struct {
	spec     sandbox.Spec
	run      *workspace.Run
	notes    []string // what staging and the timeout cap say, first in the result's notes
	unstaged []Unstaged
	unlock   func()
}

// stage checks req, locks ws, stages req.Skills and makes the command's
// run directory; the timeout is defTimeout when req names none and is
// capped at maxTimeout with a note.
func (e *Executor) stage(ctx context.Context, ws *workspace.Workspace, snap *registry.Snapshot, req ExecRequest, defTimeout, maxTimeout time.Duration) (*staged, error) {
	if ws == nil {
		return nil, fmt.Errorf("%w: no workspace", ErrExecRequest)
	}
	dir, err := cleanCwd(req.Dir)
	if err != nil {
		return nil, err
	}
	for i, g := range req.OutputFiles {
		if err := workspace.CheckGlob(g); err != nil {
			return nil, fmt.Errorf("%w: output_files[%d]: %w", ErrExecRequest, i, err)
		}
	}
	for k := range req.Env {
		if workspaceVar(k) {
			return nil, fmt.Errorf("%w: env key %q is set by the workspace; remove it from env", ErrExecRequest, k)
		}
	}
	timeout := req.Timeout
	var stageNotes []string // notes that go before the run's own
	switch {
	case timeout < 0:
		return nil, fmt.Errorf("%w: timeout %v is negative; omit it for the default %v", ErrExecRequest, timeout, defTimeout)
	case timeout == 0:
		timeout = defTimeout
	case timeout > maxTimeout:
		stageNotes = append(stageNotes, fmt.Sprintf("the timeout asked for (%v) is over the operator's maximum; the command had %v", req.Timeout, maxTimeout))
		timeout = maxTimeout
	}

	unlock, err := ws.Lock(ctx)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			unlock()
		}
	}()

	isStaged := make(map[string]bool, len(req.Skills))
	var unstaged []Unstaged
	notStaged := func(name string, sk workspace.Skipped) {
		stageNotes = append(stageNotes, fmt.Sprintf("skills/%s/%s was not staged: %s", name, sk.Path, sk.Reason))
	}
	for _, name := range req.Skills {
		if snap == nil {
			return nil, fmt.Errorf("tools: stage skill %q: no skills snapshot", name)
		}
		// The skill's manifest is what is staged: a skill over the
		// per-skill limits is staged as every reader sees it, truncated.
		src, err := snap.ListedFS(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("tools: stage skill %q: %w", name, err)
		}
		st, err := ws.Stage(ctx, name, src)
		if errors.Is(err, workspace.ErrSourceChanged) {
			// Nothing has run yet: Tool.Call stages again from a renewed
			// snapshot.
			return nil, fmt.Errorf("tools: stage skill %q: %w (%w)", name, err, registry.ErrStale)
		}
		if err != nil {
			return nil, fmt.Errorf("tools: stage skill %q: %w", name, err)
		}
		// What staging left out is said, or a skill's own inputs/ folder
		// (a name the workspace links take) would vanish without a word.
		for _, sk := range st.Skipped {
			unstaged = append(unstaged, Unstaged{Skill: name, Path: sk.Path, Reason: sk.Reason})
			notStaged(name, sk)
		}
		isStaged[name] = true
		// What the listing left out was not staged either: said in the
		// notes (the manifest's diagnostics warn about it too).
		if m, _, err := snap.Manifest(ctx, name); err == nil {
			for _, sk := range m.Skipped {
				notStaged(name, workspace.Skipped{Path: sk.Path, Reason: sk.Reason})
			}
			if m.Truncated != nil {
				stageNotes = append(stageNotes, truncatedNote(name, m))
			}
		}
	}
	run, err := ws.NewRun(ctx, skillOfDir(dir, isStaged))
	if err != nil {
		return nil, err
	}
	ok = true
	return &staged{
		spec: sandbox.Spec{
			Args:      req.Args,
			Workspace: ws.Dir(),
			Dir:       dir,
			// The paths as the command sees the workspace.
			Env:     run.Rebased(sandbox.WorkspacePath(e.runner, ws.Dir())),
			ToolEnv: req.Env,
			Stdin:   req.Stdin,
			Timeout: timeout,
			Limits:  e.limits,
			Network: e.network,
		},
		run: run, notes: stageNotes, unstaged: unstaged, unlock: unlock,
	}, nil
}

// runCommand runs the command in its workspace.run span.
func (e *Executor) runCommand(ctx context.Context, ws *workspace.Workspace, run *workspace.Run, spec sandbox.Spec) (res *sandbox.Result, err error) {
	ctx, span := e.startRunSpan(ctx, ws, run, spec, false)
	defer func() {
		if res != nil {
			endRun(span, res)
		}
		tracing.End(span, err)
	}()
	return e.runner.Run(ctx, spec)
}

// startRunSpan starts the workspace.run span of a command.
func (e *Executor) startRunSpan(ctx context.Context, ws *workspace.Workspace, run *workspace.Run, spec sandbox.Spec, background bool) (context.Context, trace.Span) {
	ctx, span := e.tracer.Start(ctx, spanRun, trace.WithAttributes(tracing.WorkspaceID.String(ws.ID()),
		attrRunner.String(sandbox.RunnerName(e.runner)), attrTimeout.Int64(spec.Timeout.Milliseconds())))
	if run.Skill != "" {
		span.SetAttributes(tracing.SkillName.String(run.Skill))
	}
	if background {
		span.SetAttributes(attrBackground.Bool(true))
	}
	return ctx, span
}

// WorkspaceExecConfig configures the workspace_exec tool.
type WorkspaceExecConfig struct {
	// Runner runs the commands; required. Use sandbox.NewIsolated.
	Runner sandbox.Runner
	// Workspaces holds the sessions' workspaces; each call runs in the
	// workspace of its session (Call.SessionID, mapped by
	// workspace.IDFor). Required.
	Workspaces *workspace.Manager
	// Options are the operator's limits, and the tracer provider of the
	// commands' workspace.run spans; nil means defaults.
	Options *ExecOptions
}

// WorkspaceExecArgs are the arguments of workspace_exec.
type WorkspaceExecArgs struct {
	// Command is the shell command, run with /bin/sh -c.
	Command string `json:"command" jsonschema:"Shell command, run with /bin/sh -c."`
	// Cwd is the working directory relative to the workspace; empty
	// means the workspace itself.
	Cwd string `json:"cwd,omitempty" jsonschema:"Working directory relative to the workspace, e.g. skills/NAME for a loaded skill. Default: the workspace."`
	// Env holds extra environment variables; PATH, HOME, LD_* and
	// similar cannot be set.
	Env map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables. PATH, HOME, LD_* and similar cannot be set."`
	// Stdin is text fed to the command's standard input.
	Stdin string `json:"stdin,omitempty" jsonschema:"Text fed to the command's standard input."`
	// TimeoutSec is the timeout in seconds, capped by the operator's
	// maximum.
	TimeoutSec float64 `json:"timeout_sec,omitempty" jsonschema:"Timeout in seconds; capped by the operator's maximum."`
	// OutputFiles are globs, relative to the workspace, of files to return
	// after the command.
	OutputFiles []string `json:"output_files,omitempty" jsonschema:"Globs relative to the workspace (e.g. out/**) of files to return after the command."`
}

// WorkspaceExec returns the workspace_exec tool: it stages every skill
// loaded for the calling agent into the session's workspace, runs command
// with /bin/sh -c in the sandbox and returns ExecResult as JSON text and as
// structured content, with the collected output files as attachments. The
// result is an error when the command exits non-zero or times out; a
// request the tool refuses or cannot run as asked gets "Error: <message>".
// A failure of the host (no workspace, a staging or sandbox failure, the
// context ended) is the handler's error. It runs commands to their end
// only; WorkspaceExecTools adds background commands.
func WorkspaceExec(cfg WorkspaceExecConfig) (Tool, error) {
	ex, err := newExec(cfg)
	if err != nil {
		return Tool{}, err
	}
	return workspaceExec(cfg, ex, nil), nil
}

// newExec checks cfg and returns its Executor.
func newExec(cfg WorkspaceExecConfig) (*Executor, error) {
	if cfg.Workspaces == nil {
		return nil, fmt.Errorf("%w: WorkspaceExecConfig.Workspaces is nil; pass the workspace.Manager that holds the sessions' workspaces", ErrExecConfig)
	}
	return NewExecutor(cfg.Runner, cfg.Options)
}

// workspaceExec builds workspace_exec; with bg it also starts background
// commands.
func workspaceExec(cfg WorkspaceExecConfig, ex *Executor, bg *background) Tool {
	var s *jsonschema.Schema
	if bg == nil {
		s = schemaFor[WorkspaceExecArgs]()
	} else {
		s = schemaFor[WorkspaceExecBackgroundArgs]()
		bg.describe(s)
	}
	s.Properties["timeout_sec"].Description = fmt.Sprintf("Timeout in seconds (default %g, at most %g; longer requests are cut to %g).",
		ex.defTimeout.Seconds(), ex.maxTimeout.Seconds(), ex.maxTimeout.Seconds())
	if bg != nil {
		s.Properties["timeout_sec"].Description += fmt.Sprintf(" With background: the wall-time limit, default and at most %g.", bg.wallTime.Seconds())
	}
	run := func(ctx context.Context, c Call) (Result, error) {
		var a WorkspaceExecBackgroundArgs
		if bg == nil {
			if r, ok := decode(WorkspaceExecName, c.Args, &a.WorkspaceExecArgs); !ok {
				return r, nil
			}
		} else if r, ok := decode(WorkspaceExecName, c.Args, &a); !ok {
			return r, nil
		}
		if strings.TrimSpace(a.Command) == "" {
			return Errorf("Error: %s needs a non-empty command", WorkspaceExecName), nil
		}
		if strings.ContainsRune(a.Command, 0) {
			return Errorf("Error: command contains a NUL byte; remove it"), nil
		}
		for k, v := range a.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
				return Errorf("Error: env: %q is not a usable environment variable (empty name, '=' or NUL); use NAME: value pairs", k), nil
			}
		}
		if a.TimeoutSec < 0 {
			return Errorf("Error: timeout_sec %g is negative; omit it for the default", a.TimeoutSec), nil
		}
		if r, ok := bg.check(a); !ok {
			return r, nil
		}
		if c.SessionID == "" {
			return Result{}, fmt.Errorf("tools: %s: the call names no session (Call.SessionID), so there is no workspace to run in", WorkspaceExecName)
		}
		ws, err := cfg.Workspaces.Open(ctx, workspace.IDFor(c.SessionID))
		if err != nil {
			return Result{}, fmt.Errorf("tools: %s: the workspace of session %q: %w", WorkspaceExecName, c.SessionID, err)
		}
		maxTimeout := ex.maxTimeout
		if a.Background {
			maxTimeout = bg.wallTime
		}
		req := ExecRequest{
			Args: []string{"/bin/sh", "-c", a.Command},
			Dir:  a.Cwd,
			Env:  a.Env,
			// Saturated far above the maximum, so that Exec caps it and
			// says so in the notes.
			Timeout:     secondsToDuration(a.TimeoutSec, max(maxTimeout, maxAskedTimeout)),
			OutputFiles: a.OutputFiles,
			Skills:      loadedSkills(c),
		}
		if a.Stdin != "" {
			req.Stdin = []byte(a.Stdin)
		}
		if a.Background {
			return bg.start(ctx, c, ws, req, a.WaitMS)
		}
		res, err := ex.Exec(ctx, ws, c.Skills, req)
		if err != nil {
			return execError(ctx, err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return Result{}, err
		}
		out := Result{Text: string(b), IsError: res.Failed(), Structured: b}
		for _, f := range res.OutputFiles {
			out.Attachments = append(out.Attachments, Attachment{Name: f.Path, MIMEType: f.MIME, Size: f.Size, Text: f.Content, Truncated: f.Truncated})
		}
		return out, nil
	}
	desc := "Run a shell command in this session's sandboxed workspace. Loaded skills are copied to skills/<name> first; " +
		"run a skill's scripts with cwd skills/<name>. Write results under out/ and list them in output_files to get them back. " +
		"Returns JSON with exit_code, stdout, stderr, truncation flags, timed_out, oom_killed, disk_limit, duration_ms, output_files and notes."
	if bg != nil {
		desc += " With background: true it starts the command and returns at once (or after wait_ms) with a handle and its status and first output, " +
			"for servers, watchers and interactive programs; use " + WorkspaceExecReadName + ", " + WorkspaceExecWriteName + " and " + WorkspaceExecKillName + " with the handle."
	}
	return builtin(WorkspaceExecName, desc, s, run)
}

// execError turns an error from running a command into the result the
// model sees when it was the request's fault, or into the handler's
// error.
func execError(ctx context.Context, err error) (Result, error) {
	switch {
	case ctx.Err() != nil:
		return Result{}, ctx.Err()
	case errors.Is(err, sandbox.ErrForbiddenEnv):
		return Errorf("Error: env: %s", detail(err, sandbox.ErrForbiddenEnv)), nil
	case errors.Is(err, sandbox.ErrCommandStart):
		return Errorf("Error: %s", detail(err, sandbox.ErrCommandStart)), nil
	case errors.Is(err, sandbox.ErrCommandLost):
		return Errorf("Error: %s", detail(err, sandbox.ErrCommandLost)), nil
	case errors.Is(err, sandbox.ErrWorkingDir):
		return Errorf("Error: cwd: %s", detail(err, sandbox.ErrInvalidSpec, sandbox.ErrWorkingDir, sandbox.ErrOutsideWorkspace)), nil
	case errors.Is(err, ErrExecRequest):
		return Errorf("Error: %s", detail(err, ErrExecRequest)), nil
	}
	return Result{}, fmt.Errorf("tools: %s: %w", WorkspaceExecName, err)
}

// loadedSkills lists the visible skills loaded for the calling agent.
func loadedSkills(c Call) []string {
	if c.Skills == nil || c.State == nil {
		return nil
	}
	var names []string
	for _, s := range c.Skills.Summaries() {
		if c.State.Loaded(s.Name) {
			names = append(names, s.Name)
		}
	}
	return names
}

// maxAskedTimeout bounds the timeout a model's call may ask for before
// Exec caps it at the operator's maximum: it only keeps the conversion
// from overflowing.
const maxAskedTimeout = 1000 * time.Hour

// secondsToDuration converts a requested timeout, saturating at max so that
// huge values cannot overflow.
func secondsToDuration(sec float64, max time.Duration) time.Duration {
	if sec >= max.Seconds() {
		return max
	}
	d := time.Duration(sec * float64(time.Second))
	if sec > 0 && d < time.Millisecond {
		// A timeout asked for is never the zero that means the default.
		d = time.Millisecond
	}
	return d
}

// cleanCwd validates a working directory relative to the workspace and
// returns it in slash form ("" for the workspace itself).
func cleanCwd(dir string) (string, error) {
	if dir == "" || dir == "." {
		return "", nil
	}
	if strings.ContainsRune(dir, 0) || strings.Contains(dir, `\`) {
		return "", fmt.Errorf("%w: cwd %q contains a NUL or backslash; use a slash-separated path", ErrExecRequest, dir)
	}
	if path.IsAbs(dir) {
		return "", fmt.Errorf("%w: cwd %q is absolute; pass a path relative to the workspace, e.g. skills/NAME", ErrExecRequest, dir)
	}
	for _, el := range strings.Split(dir, "/") {
		if el == ".." {
			return "", fmt.Errorf("%w: cwd %q contains \"..\"; pass a path inside the workspace, e.g. skills/NAME", ErrExecRequest, dir)
		}
	}
	return path.Clean(dir), nil
}

// skillOfDir returns the staged skill whose folder contains dir, or "".
func skillOfDir(dir string, staged map[string]bool) string {
	rest, ok := strings.CutPrefix(dir, "skills/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if staged[name] {
		return name
	}
	return ""
}

// workspaceVar reports whether key is one of the variables the workspace
// sets for every command.
func workspaceVar(key string) bool {
	switch strings.ToUpper(key) {
	case workspace.EnvWorkspaceDir, workspace.EnvSkillsDir, workspace.EnvWorkDir,
		workspace.EnvOutputDir, workspace.EnvRunDir, workspace.EnvSkillName:
		return true
	}
	return false
}

// detail drops the sandbox's sentinel prefixes from an error's text: the
// model needs what went wrong with its arguments, not which Go error it is.
func detail(err error, sentinels ...error) string {
	msg := err.Error()
	for _, s := range sentinels {
		if i := strings.LastIndex(msg, s.Error()+": "); i >= 0 {
			msg = msg[i+len(s.Error())+2:]
		}
	}
	return msg
}
