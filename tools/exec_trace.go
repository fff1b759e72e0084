package tools

import (
	"fmt"

	"github.com/skillkit/skillkit/internal/tracing"
	"github.com/skillkit/skillkit/sandbox"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the Executor's tracer: the package's import path.
const tracerName = "github.com/skillkit/skillkit/tools"

// spanRun is the span of one command: named for the workspace, as the
// workspace package's spans around it are, though the Executor makes it.
const spanRun = "workspace.run"

// The attributes of the workspace.run span: how the command ended and
// the sizes of its output, never the command or what it printed.
const (
	attrExitCode  = attribute.Key("process.exit.code")
	attrRunner    = attribute.Key("skillkit.run.runner")
	attrTimeout   = attribute.Key("skillkit.run.timeout_ms")
	attrDuration  = attribute.Key("skillkit.run.duration_ms")
	attrTimedOut  = attribute.Key("skillkit.run.timed_out")
	attrOOMKilled = attribute.Key("skillkit.run.oom_killed")
	attrDiskLimit = attribute.Key("skillkit.run.disk_limit")
	attrStdout    = attribute.Key("skillkit.run.stdout_bytes")
	attrStderr    = attribute.Key("skillkit.run.stderr_bytes")
	attrCut       = attribute.Key("skillkit.run.output_truncated")
	// attrBackground marks a command workspace_exec started in the
	// background: its span lasts until the command ends, after the call
	// that started it.
	attrBackground = attribute.Key("skillkit.run.background")
	// attrKilled: workspace_exec_kill (or the end of its workspace or of
	// the tools) killed the background command.
	attrKilled = attribute.Key("skillkit.run.killed")
)

// endRun sets how the command ended on its span; a command that failed
// (non-zero exit, timeout) fails the span, without an error to record.
func endRun(span trace.Span, res *sandbox.Result) {
	span.SetAttributes(attrStdout.Int(len(res.Stdout)), attrStderr.Int(len(res.Stderr)))
	endOutcome(span, res)
}

// endOutcome sets how a command ended, its output aside (a background
// command's is read in pieces, not held in its result); a command killed
// on request has not failed.
func endOutcome(span trace.Span, res *sandbox.Result) {
	span.SetAttributes(attrExitCode.Int(res.ExitCode), attrDuration.Int64(res.Duration.Milliseconds()),
		attrTimedOut.Bool(res.TimedOut), attrOOMKilled.Bool(res.OOMKilled), attrDiskLimit.Bool(res.DiskLimit),
		attrCut.Bool(res.StdoutTruncated || res.StderrTruncated))
	if res.Killed {
		span.SetAttributes(attrKilled.Bool(true))
	}
	switch {
	case res.Killed:
	case res.TimedOut:
		tracing.Fail(span, "the command timed out")
	case res.ExitCode != 0:
		tracing.Fail(span, fmt.Sprintf("the command exited with %d", res.ExitCode))
	}
}
