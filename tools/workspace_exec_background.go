package tools

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/workspace"
	"go.opentelemetry.io/otel/trace"
)

// The names of workspace_exec's companions, which use the handle of a
// command it started with background: true. They begin with
// workspace_exec_ so that they sort with it.
const (
	WorkspaceExecReadName  = "workspace_exec_read"
	WorkspaceExecWriteName = "workspace_exec_write"
	WorkspaceExecKillName  = "workspace_exec_kill"
)

// ExecToolNames returns the names of workspace_exec and its companions,
// in the order WorkspaceExecTools returns them. Each call returns a fresh
// slice.
func ExecToolNames() []string {
	return []string{WorkspaceExecName, WorkspaceExecReadName, WorkspaceExecWriteName, WorkspaceExecKillName}
}

// WithExecCompanions returns names with workspace_exec's companions
// inserted right after workspace_exec when names lists it and none of
// them: a profile that offers commands gets the tools its background
// commands need without naming them, and one that names a companion gets
// exactly what it names. Other lists are returned as they are.
func WithExecCompanions(names []string) []string {
	i := slices.Index(names, WorkspaceExecName)
	if i < 0 || slices.ContainsFunc(names, isCompanion) {
		return names
	}
	return slices.Concat(names[:i+1], ExecToolNames()[1:], names[i+1:])
}

// isCompanion reports whether name is one of workspace_exec's companions.
func isCompanion(name string) bool {
	return name != WorkspaceExecName && slices.Contains(ExecToolNames(), name)
}

// Defaults of BackgroundOptions.
const (
	DefaultBackgroundProcesses = 4
	DefaultBackgroundWallTime  = 30 * time.Minute
	DefaultMaxWriteBytes       = 64 << 10
	DefaultMaxReadBytes        = 64 << 10
	DefaultMaxWait             = 30 * time.Second
	DefaultWriteTimeout        = 5 * time.Second
	DefaultKeepExited          = 10 * time.Minute
)

// BackgroundOptions bound the commands workspace_exec starts with
// background: true (see WorkspaceExecTools). Each runs in the same
// sandbox with the same Limits as a command run to its end — CPU seconds
// included, so a busy long command needs Limits.CPUSeconds raised — except
// the wall-clock bound, which is MaxWallTime. Zero fields mean the
// defaults; negative ones are errors.
type BackgroundOptions struct {
	// MaxProcesses bounds the background commands running at once in one
	// session; default DefaultBackgroundProcesses. A start past it is an
	// error result naming the limit.
	MaxProcesses int
	// MaxWallTime bounds a background command's wall-clock time, and is
	// its time when the call names no timeout_sec; at the bound it is
	// stopped like a command at its timeout (status timed_out). Default
	// DefaultBackgroundWallTime, or the runner's MaxStartTimeout when
	// that is lower; a value above it is an error.
	MaxWallTime time.Duration
	// MaxWriteBytes bounds the input of one workspace_exec_write call;
	// default DefaultMaxWriteBytes.
	MaxWriteBytes int
	// MaxReadBytes bounds the output one result returns, stdout and
	// stderr together, and is max_bytes when the call names none; default
	// DefaultMaxReadBytes. What does not fit waits for the next read; what
	// waits unread beyond Limits.OutputBytes per stream is dropped, oldest
	// first, and counted in the next result.
	MaxReadBytes int
	// MaxWait bounds wait_ms; default DefaultMaxWait. Longer waits are cut
	// to it.
	MaxWait time.Duration
	// WriteTimeout bounds how long workspace_exec_write waits for a
	// command that does not read its stdin; default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// KeepExited is how long the handle of a command that ended is kept
	// for a result to report its end; default DefaultKeepExited. A handle
	// is forgotten at once when a result has reported the end with all
	// its output, and at most MaxProcesses ended ones are kept per
	// session (the one that ended first goes first).
	KeepExited time.Duration
}

// Values of BackgroundResult.Status.
const (
	StatusRunning  = "running"
	StatusExited   = "exited"
	StatusTimedOut = "timed_out"
	StatusKilled   = "killed"
)

// BackgroundResult is what workspace_exec with background: true,
// workspace_exec_read and workspace_exec_kill return, as JSON text and
// structured content.
type BackgroundResult struct {
	// Handle names the command in this session.
	Handle string `json:"handle"`
	// Status is running, exited, timed_out (stopped at its wall-time
	// limit) or killed (by workspace_exec_kill).
	Status string `json:"status"`
	// ExitCode is set once the command has ended (128+signal when a
	// signal ended it).
	ExitCode *int `json:"exit_code,omitempty"`
	// Stdout and Stderr are the output since the previous result.
	Stdout string `json:"stdout"`
	// Stderr is the standard error since the previous result.
	Stderr string `json:"stderr"`
	// StdoutDropped and StderrDropped count bytes lost before that output
	// because too much waited unread.
	StdoutDropped int64 `json:"stdout_dropped,omitempty"`
	// StderrDropped counts the bytes of standard error lost that way.
	StderrDropped int64 `json:"stderr_dropped,omitempty"`
	// More reports output still waiting: read again.
	More bool `json:"more,omitempty"`
	// OOMKilled and DiskLimit are as in ExecResult.
	OOMKilled bool `json:"oom_killed,omitempty"`
	// DiskLimit: the workspace or /tmp was (nearly) full.
	DiskLimit bool `json:"disk_limit,omitempty"`
	// DurationMS is the time since the start, or the command's whole
	// time once it has ended.
	DurationMS int64 `json:"duration_ms"`
	// Notes explain limits, dropped output and what to do next.
	Notes []string `json:"notes,omitempty"`
}

// BackgroundWriteResult is what workspace_exec_write returns.
type BackgroundWriteResult struct {
	// Handle names the command.
	Handle string `json:"handle"`
	// BytesWritten counts the bytes of input the command's stdin took.
	BytesWritten int `json:"bytes_written"`
	// StdinClosed reports that the command's stdin is now closed.
	StdinClosed bool `json:"stdin_closed"`
}

// WorkspaceExecBackgroundArgs are the arguments of workspace_exec as
// WorkspaceExecTools builds it.
type WorkspaceExecBackgroundArgs struct {
	// WorkspaceExecArgs are the arguments of every command.
	WorkspaceExecArgs
	// Background starts the command and returns its handle.
	Background bool `json:"background,omitempty" jsonschema:"Start the command in the background and return a handle at once."`
	// WaitMS waits for the first output or the end after a background
	// start.
	WaitMS int `json:"wait_ms,omitempty" jsonschema:"With background: wait up to this many milliseconds for first output or the end."`
}

// WorkspaceExecReadArgs are the arguments of workspace_exec_read.
type WorkspaceExecReadArgs struct {
	// Handle names the command.
	Handle string `json:"handle" jsonschema:"The handle workspace_exec returned."`
	// WaitMS waits for new output or the end when there is none yet.
	WaitMS int `json:"wait_ms,omitempty" jsonschema:"Wait up to this many milliseconds for new output or the end when there is none yet."`
	// MaxBytes bounds the output returned.
	MaxBytes int `json:"max_bytes,omitempty" jsonschema:"At most this many bytes of stdout and stderr together."`
}

// WorkspaceExecWriteArgs are the arguments of workspace_exec_write.
type WorkspaceExecWriteArgs struct {
	// Handle names the command.
	Handle string `json:"handle" jsonschema:"The handle workspace_exec returned."`
	// Input is written to the command's stdin.
	Input string `json:"input,omitempty" jsonschema:"Text written to the command's stdin as it is (add a newline to end a line)."`
	// CloseStdin closes the stdin after Input.
	CloseStdin bool `json:"close_stdin,omitempty" jsonschema:"Close the command's stdin after the input, so that it reads end of file."`
}

// WorkspaceExecKillArgs are the arguments of workspace_exec_kill.
type WorkspaceExecKillArgs struct {
	// Handle names the command.
	Handle string `json:"handle" jsonschema:"The handle workspace_exec returned."`
}

// ExecTools are workspace_exec and its companions for background
// commands, sharing the table of the commands started in each session.
type ExecTools struct {
	tools []Tool
	bg    *background
}

// Tools returns workspace_exec, workspace_exec_read, workspace_exec_write
// and workspace_exec_kill, in that order (ExecToolNames).
func (e *ExecTools) Tools() []Tool { return slices.Clone(e.tools) }

// Close kills every background command the tools started and waits for
// them to end; later background starts fail (commands run to their end
// still work). Closing twice is harmless.
func (e *ExecTools) Close() error {
	e.bg.close()
	return nil
}

// WorkspaceExecTools returns workspace_exec, able to start commands in the
// background (background: true, bounded by cfg.Options.Background), and
// the companions that use their handles: workspace_exec_read (new output
// and, once it ended, the status and exit code), workspace_exec_write
// (input to the command's stdin) and workspace_exec_kill (ends every
// process of the command). Handles are random and scoped to the session:
// another session's handle is unknown. Each background command is
// attached to its workspace (workspace.Workspace.Attach), so that
// removing the workspace or closing its Manager kills it; Close kills them
// all. A runner that cannot start commands (sandbox.CanStart) makes
// background: true an error result saying so.
func WorkspaceExecTools(cfg WorkspaceExecConfig) (*ExecTools, error) {
	ex, err := newExec(cfg)
	if err != nil {
		return nil, err
	}
	var o BackgroundOptions
	if cfg.Options != nil {
		o = cfg.Options.Background
	}
	bg, err := newBackground(ex, o)
	if err != nil {
		return nil, err
	}
	return &ExecTools{bg: bg, tools: []Tool{workspaceExec(cfg, ex, bg), bg.readTool(), bg.writeTool(), bg.killTool()}}, nil
}

// background is the table of the background commands of one set of exec
// tools.
type background struct {
	ex           *Executor
	can          bool // the runner can start commands
	maxProcs     int
	wallTime     time.Duration
	maxWrite     int
	maxRead      int
	maxWait      time.Duration
	writeTimeout time.Duration
	keep         time.Duration

	mu       sync.Mutex
	sessions map[string]map[string]*bgProc // workspace ID → handle → command
	starting map[string]int                // starts under way per workspace ID
	closed   bool
}

// bgProc is one background command.
type bgProc struct {
	handle  string
	wsID    string
	proc    sandbox.Process
	started time.Time
	timeout time.Duration
	detach  func()
	endedAt atomic.Int64 // Unix nanoseconds of its end once seen; 0 before
}

// newBackground checks o and applies its defaults.
func newBackground(ex *Executor, o BackgroundOptions) (*background, error) {
	b := &background{ex: ex, can: sandbox.CanStart(ex.runner), maxProcs: o.MaxProcesses, wallTime: o.MaxWallTime,
		maxWrite: o.MaxWriteBytes, maxRead: o.MaxReadBytes, maxWait: o.MaxWait, writeTimeout: o.WriteTimeout, keep: o.KeepExited,
		sessions: map[string]map[string]*bgProc{}, starting: map[string]int{}}
	bad := func(field string, v any, def any) error {
		return fmt.Errorf("%w: ExecOptions.Background.%s is %v; use a positive value or 0 for the default %v", ErrExecConfig, field, v, def)
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"MaxProcesses", &b.maxProcs, DefaultBackgroundProcesses}, {"MaxWriteBytes", &b.maxWrite, DefaultMaxWriteBytes}, {"MaxReadBytes", &b.maxRead, DefaultMaxReadBytes}} {
		if *f.v < 0 {
			return nil, bad(f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"MaxWait", &b.maxWait, DefaultMaxWait}, {"WriteTimeout", &b.writeTimeout, DefaultWriteTimeout}, {"KeepExited", &b.keep, DefaultKeepExited}} {
		if *f.v < 0 {
			return nil, bad(f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	ceiling, hasCeiling := sandbox.MaxStartTimeout(ex.runner)
	switch {
	case b.wallTime < 0:
		return nil, bad("MaxWallTime", b.wallTime, DefaultBackgroundWallTime)
	case b.wallTime == 0:
		b.wallTime = DefaultBackgroundWallTime
		if hasCeiling && ceiling < b.wallTime {
			b.wallTime = ceiling
		}
	case hasCeiling && b.wallTime > ceiling:
		return nil, fmt.Errorf("%w: ExecOptions.Background.MaxWallTime %v exceeds the runner's MaxStartTimeout %v; lower it or raise the runner's", ErrExecConfig, b.wallTime, ceiling)
	}
	return b, nil
}

// describe fills the limits into the schema of workspace_exec.
func (b *background) describe(s *jsonschema.Schema) {
	s.Properties["wait_ms"].Description = fmt.Sprintf("With background: wait up to this many milliseconds (at most %d) for first output or the end; default 0, return at once.", b.maxWait.Milliseconds())
}

// check refuses the arguments a background start cannot take; a nil b
// (no background commands) has nothing to check.
func (b *background) check(a WorkspaceExecBackgroundArgs) (Result, bool) {
	switch {
	case b == nil:
	case a.WaitMS < 0:
		return Errorf("Error: wait_ms %d is negative; omit it to return at once", a.WaitMS), false
	case !a.Background && a.WaitMS != 0:
		return Errorf("Error: wait_ms applies only with background: true; remove it, or add background: true"), false
	case a.Background && len(a.OutputFiles) > 0:
		return Errorf("Error: output_files: a background command's files are not collected; once it has ended, run %s with output_files (a command such as true will do) to get them", WorkspaceExecName), false
	case a.Background && a.Stdin != "":
		return Errorf("Error: stdin: a background command's input is sent with %s; remove stdin and send it there after the start", WorkspaceExecWriteName), false
	case a.Background && !b.can:
		return Errorf("Error: background: this sandbox (%s) cannot start background commands; run the command without background", sandbox.RunnerName(b.ex.runner)), false
	}
	return Result{}, true
}

// start starts req in the background in ws.
func (b *background) start(ctx context.Context, c Call, ws *workspace.Workspace, req ExecRequest, waitMS int) (Result, error) {
	if r, ok, err := b.reserve(ws.ID()); !ok {
		return r, err
	}
	defer b.unreserve(ws.ID())
	st, err := b.ex.stage(ctx, ws, c.Skills, req, b.wallTime, b.wallTime)
	if err != nil {
		return execError(ctx, err)
	}
	// Unlocked once the command is attached, below, or on the way out
	// (unlocking twice is harmless).
	defer st.unlock()
	p := &bgProc{handle: newHandle(), wsID: ws.ID(), timeout: st.spec.Timeout}
	spanCtx, span := b.ex.startRunSpan(ctx, ws, st.run, st.spec, true)
	proc, err := sandbox.Start(spanCtx, b.ex.runner, st.spec)
	if err != nil {
		tracing.End(span, err)
		return execError(ctx, err)
	}
	p.proc, p.started = proc, time.Now()
	// Attached while the workspace is still locked, so that a Remove
	// waiting for the lock finds it.
	if p.detach, err = ws.Attach(bgCloser{b, p}); err == nil {
		err = b.add(p)
	}
	if err != nil {
		proc.Kill()
		_, _ = proc.Wait()
		tracing.End(span, err)
		if p.detach != nil {
			p.detach()
		}
		return Result{}, fmt.Errorf("tools: %s: %w", WorkspaceExecName, err)
	}
	// The span covers the command's life, which outlasts this call.
	go b.watch(p, span)
	st.unlock()
	extra := st.notes
	wait, waitNote := b.waitFor(waitMS)
	if waitNote != "" {
		extra = append(extra, waitNote)
	}
	return b.readNow(ctx, p, wait, b.maxRead, extra)
}

// watch ends the command's span when it ends and records when.
func (b *background) watch(p *bgProc, span trace.Span) {
	res, err := p.proc.Wait()
	if res != nil {
		endOutcome(span, res)
	}
	tracing.End(span, err)
	p.endedAt.Store(time.Now().UnixNano())
}

// reserve counts a start under way in session wsID, or refuses it at the
// limit.
func (b *background) reserve(wsID string) (Result, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return Result{}, false, fmt.Errorf("tools: %s: the exec tools are closed", WorkspaceExecName)
	}
	b.prune()
	var running []string
	for h, p := range b.sessions[wsID] {
		if !ended(p.proc) {
			running = append(running, h)
		}
	}
	if len(running)+b.starting[wsID] >= b.maxProcs {
		slices.Sort(running)
		return Errorf("Error: background: %d background commands already run in this session, the limit (ExecOptions.Background.MaxProcesses); end one with %s (running: %s) or wait for one to end before starting another",
			b.maxProcs, WorkspaceExecKillName, strings.Join(running, ", ")), false, nil
	}
	b.starting[wsID]++
	return Result{}, true, nil
}

// unreserve ends a start under way.
func (b *background) unreserve(wsID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.starting[wsID]--; b.starting[wsID] <= 0 {
		delete(b.starting, wsID)
	}
}

// add records a started command.
func (b *background) add(p *bgProc) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errors.New("the exec tools were closed while the command started")
	}
	if b.sessions[p.wsID] == nil {
		b.sessions[p.wsID] = map[string]*bgProc{}
	}
	b.sessions[p.wsID][p.handle] = p
	return nil
}

// lookup returns the command of handle in session wsID, or nil.
func (b *background) lookup(wsID, handle string) *bgProc {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prune()
	return b.sessions[wsID][handle]
}

// forget drops p from the table and from its workspace.
func (b *background) forget(p *bgProc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forgetLocked(p)
}

// forgetLocked is forget with b.mu held.
func (b *background) forgetLocked(p *bgProc) {
	procs := b.sessions[p.wsID]
	if procs[p.handle] != p {
		return
	}
	delete(procs, p.handle)
	if len(procs) == 0 {
		delete(b.sessions, p.wsID)
	}
	p.detach()
}

// prune forgets ended commands kept longer than b.keep, and the ones that
// ended first where a session keeps more than b.maxProcs; b.mu is held.
func (b *background) prune() {
	now := time.Now().UnixNano()
	for _, procs := range b.sessions {
		var done []*bgProc
		for _, p := range procs {
			if t := p.endedAt.Load(); t != 0 {
				done = append(done, p)
			}
		}
		slices.SortFunc(done, func(x, y *bgProc) int { return cmp.Compare(x.endedAt.Load(), y.endedAt.Load()) })
		for i, p := range done {
			if now-p.endedAt.Load() > int64(b.keep) || len(done)-i > b.maxProcs {
				b.forgetLocked(p)
			}
		}
	}
}

// close kills every command and waits for them.
func (b *background) close() {
	b.mu.Lock()
	b.closed = true
	var all []*bgProc
	for _, procs := range b.sessions {
		for _, p := range procs {
			all = append(all, p)
		}
	}
	b.mu.Unlock()
	for _, p := range all {
		p.proc.Kill()
	}
	for _, p := range all {
		_, _ = p.proc.Wait()
		b.forget(p)
	}
}

// bgCloser ends a command when its workspace goes.
type bgCloser struct {
	b *background
	p *bgProc
}

// Close implements io.Closer.
func (c bgCloser) Close() error {
	c.p.proc.Kill()
	_, _ = c.p.proc.Wait()
	c.b.forget(c.p)
	return nil
}

// waitFor converts wait_ms to a wait, capped at b.maxWait with a note.
func (b *background) waitFor(ms int) (time.Duration, string) {
	if int64(ms) > b.maxWait.Milliseconds() {
		return b.maxWait, fmt.Sprintf("wait_ms %d is over the maximum; waited at most %d", ms, b.maxWait.Milliseconds())
	}
	return time.Duration(ms) * time.Millisecond, ""
}

// readNow reads p's new output, waiting up to wait when there is none,
// and returns the result; one that reports the end with all the output
// forgets the handle.
func (b *background) readNow(ctx context.Context, p *bgProc, wait time.Duration, maxBytes int, extra []string) (Result, error) {
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	out := p.proc.Read(rctx, maxBytes)
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	r, err := b.report(p, out, extra)
	if err != nil {
		return Result{}, err
	}
	if out.Done && out.Pending == 0 {
		b.forget(p)
	}
	return b.result(r)
}

// report builds the result of p after a read of out.
func (b *background) report(p *bgProc, out sandbox.Output, extra []string) (*BackgroundResult, error) {
	r := &BackgroundResult{Handle: p.handle, Status: StatusRunning, Stdout: string(out.Stdout), Stderr: string(out.Stderr),
		StdoutDropped: out.StdoutDropped, StderrDropped: out.StderrDropped, More: out.Pending > 0,
		DurationMS: time.Since(p.started).Milliseconds(), Notes: extra}
	if out.Done {
		res, err := p.proc.Wait()
		if errors.Is(err, sandbox.ErrCommandLost) && res != nil {
			// Ended as a killed command is, and the note says why.
			res.Killed = true
			r.Notes = append(r.Notes, detail(err, sandbox.ErrCommandLost))
			err = nil
		}
		if err != nil {
			b.forget(p)
			return nil, fmt.Errorf("tools: background command %s: %w", p.handle, err)
		}
		code := res.ExitCode
		r.ExitCode, r.OOMKilled, r.DiskLimit, r.DurationMS = &code, res.OOMKilled, res.DiskLimit, res.Duration.Milliseconds()
		switch {
		case res.Killed:
			r.Status = StatusKilled
		case res.TimedOut:
			r.Status = StatusTimedOut
		default:
			r.Status = StatusExited
		}
		// Dropped output is said per read below, not as the
		// foreground's truncation.
		ended := *res
		ended.StdoutTruncated, ended.StderrTruncated = false, false
		r.Notes = append(r.Notes, notes(&ended, p.timeout, b.ex.limits)...)
	}
	for _, d := range []struct {
		name string
		n    int64
	}{{"stdout", out.StdoutDropped}, {"stderr", out.StderrDropped}} {
		if d.n > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%d bytes of %s were dropped before this output: more than the output limit waited unread; read more often, or write large output to a file under out/", d.n, d.name))
		}
	}
	if out.Pending > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d more bytes of output are waiting; call %s again", out.Pending, WorkspaceExecReadName))
	}
	return r, nil
}

// result is r as the model sees it: an error when the command failed.
func (b *background) result(r *BackgroundResult) (Result, error) {
	j, err := json.Marshal(r)
	if err != nil {
		return Result{}, err
	}
	failed := r.Status == StatusTimedOut || r.Status == StatusExited && *r.ExitCode != 0
	return Result{Text: string(j), IsError: failed, Structured: j}, nil
}

// find returns the command a companion's call names, or the error result.
func (b *background) find(tool string, c Call, handle string) (*bgProc, Result, error) {
	if c.SessionID == "" {
		return nil, Result{}, fmt.Errorf("tools: %s: the call names no session (Call.SessionID), so there is no background command to use", tool)
	}
	if handle == "" {
		return nil, Errorf("Error: %s needs the handle that %s with background: true returned", tool, WorkspaceExecName), nil
	}
	p := b.lookup(workspace.IDFor(c.SessionID), handle)
	if p == nil {
		return nil, Errorf("Error: handle: unknown handle %q in this session; use a handle %s with background: true returned here (a handle is forgotten once a result has reported the command's end, or %v after it ended)",
			handle, WorkspaceExecName, b.keep), nil
	}
	return p, Result{}, nil
}

// readTool returns workspace_exec_read.
func (b *background) readTool() Tool {
	s := schemaFor[WorkspaceExecReadArgs]()
	s.Properties["wait_ms"].Description = fmt.Sprintf("When there is no new output yet, wait up to this many milliseconds (at most %d) for some or for the end; default 0, return at once.", b.maxWait.Milliseconds())
	s.Properties["max_bytes"].Description = fmt.Sprintf("At most this many bytes of stdout and stderr together (default and at most %d); the rest waits for the next read.", b.maxRead)
	return builtin(WorkspaceExecReadName,
		"Read what a background command (started by "+WorkspaceExecName+" with background: true) printed since the last read, and its status: "+
			"running, or exited, timed_out or killed with its exit_code. Returns JSON with handle, status, exit_code, stdout, stderr, more (output still waiting), dropped byte counts, duration_ms and notes.",
		s, func(ctx context.Context, c Call) (Result, error) {
			var a WorkspaceExecReadArgs
			if r, ok := decode(WorkspaceExecReadName, c.Args, &a); !ok {
				return r, nil
			}
			switch {
			case a.WaitMS < 0:
				return Errorf("Error: wait_ms %d is negative; omit it to return at once", a.WaitMS), nil
			case a.MaxBytes < 0:
				return Errorf("Error: max_bytes %d is negative; omit it for %d", a.MaxBytes, b.maxRead), nil
			}
			p, r, err := b.find(WorkspaceExecReadName, c, a.Handle)
			if p == nil {
				return r, err
			}
			var extra []string
			limit := b.maxRead
			if a.MaxBytes > 0 {
				limit = min(a.MaxBytes, b.maxRead)
			}
			wait, note := b.waitFor(a.WaitMS)
			if note != "" {
				extra = append(extra, note)
			}
			return b.readNow(ctx, p, wait, limit, extra)
		})
}

// writeTool returns workspace_exec_write.
func (b *background) writeTool() Tool {
	s := schemaFor[WorkspaceExecWriteArgs]()
	s.Properties["input"].Description = fmt.Sprintf("Text written to the command's stdin as it is, at most %d bytes (add a newline to end a line).", b.maxWrite)
	return builtin(WorkspaceExecWriteName,
		"Write input to the stdin of a background command (started by "+WorkspaceExecName+" with background: true), and close its stdin with close_stdin. "+
			"Returns JSON with handle, bytes_written and stdin_closed; read the answer with "+WorkspaceExecReadName+".",
		s, func(ctx context.Context, c Call) (Result, error) {
			var a WorkspaceExecWriteArgs
			if r, ok := decode(WorkspaceExecWriteName, c.Args, &a); !ok {
				return r, nil
			}
			switch {
			case len(a.Input) > b.maxWrite:
				return Errorf("Error: input: %d bytes is over the limit of %d per call (ExecOptions.Background.MaxWriteBytes); send it in parts", len(a.Input), b.maxWrite), nil
			case a.Input == "" && !a.CloseStdin:
				return Errorf("Error: %s needs input, close_stdin: true, or both", WorkspaceExecWriteName), nil
			}
			p, r, err := b.find(WorkspaceExecWriteName, c, a.Handle)
			if p == nil {
				return r, err
			}
			if ended(p.proc) {
				return Errorf("Error: handle: the command %s has ended, so it takes no input; read its end with %s", p.handle, WorkspaceExecReadName), nil
			}
			n := 0
			if a.Input != "" {
				wctx, cancel := context.WithTimeout(ctx, b.writeTimeout)
				n, err = p.proc.Write(wctx, []byte(a.Input))
				cancel()
				switch {
				case err == nil:
				case ctx.Err() != nil:
					return Result{}, ctx.Err()
				case errors.Is(err, sandbox.ErrStdinClosed):
					return Errorf("Error: the stdin of %s is closed (close_stdin was sent); it takes no more input", p.handle), nil
				case errors.Is(err, sandbox.ErrProcessEnded):
					return Errorf("Error: handle: the command %s has ended after taking %d of %d bytes; read its end with %s", p.handle, n, len(a.Input), WorkspaceExecReadName), nil
				case errors.Is(err, context.DeadlineExceeded):
					return Errorf("Error: input: the command %s took %d of %d bytes and then read no more for %v; read its output with %s and send the rest (from byte %d) later",
						p.handle, n, len(a.Input), b.writeTimeout, WorkspaceExecReadName, n), nil
				default:
					return Result{}, fmt.Errorf("tools: %s: %w", WorkspaceExecWriteName, err)
				}
			}
			if a.CloseStdin {
				if err := p.proc.CloseStdin(); err != nil {
					return Result{}, fmt.Errorf("tools: %s: %w", WorkspaceExecWriteName, err)
				}
			}
			j, err := json.Marshal(BackgroundWriteResult{Handle: p.handle, BytesWritten: n, StdinClosed: a.CloseStdin})
			if err != nil {
				return Result{}, err
			}
			return Result{Text: string(j), Structured: j}, nil
		})
}

// killTool returns workspace_exec_kill.
func (b *background) killTool() Tool {
	return builtin(WorkspaceExecKillName,
		"Kill a background command (started by "+WorkspaceExecName+" with background: true) and every process it started, and forget its handle. "+
			"Returns JSON like "+WorkspaceExecReadName+": status killed (or how it had ended before), exit_code and the output not read yet.",
		schemaFor[WorkspaceExecKillArgs](), func(ctx context.Context, c Call) (Result, error) {
			var a WorkspaceExecKillArgs
			if r, ok := decode(WorkspaceExecKillName, c.Args, &a); !ok {
				return r, nil
			}
			p, r, err := b.find(WorkspaceExecKillName, c, a.Handle)
			if p == nil {
				return r, err
			}
			p.proc.Kill()
			select {
			case <-p.proc.Done():
			case <-ctx.Done():
				return Result{}, ctx.Err()
			}
			out := p.proc.Read(ctx, b.maxRead)
			rep, err := b.report(p, out, nil)
			b.forget(p)
			if err != nil {
				return Result{}, err
			}
			if out.Pending > 0 {
				// The handle goes with this result: say what is lost
				// instead of asking for another read.
				rep.More = false
				rep.Notes[len(rep.Notes)-1] = fmt.Sprintf("%d more bytes of output were not read and are dropped with the handle", out.Pending)
			}
			return b.result(rep)
		})
}

// ended reports whether p has ended.
func ended(p sandbox.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// newHandle returns a random, unguessable handle.
func newHandle() string { return "bg-" + strings.ToLower(rand.Text()) }
