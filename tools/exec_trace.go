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
)

// endRun sets how the command ended on its span; a command that failed
// (non-zero exit, timeout) fails the span, without an error to record.
func endRun(span trace.Span, res *sandbox.Result) {
	span.SetAttributes(attrExitCode.Int(res.ExitCode), attrDuration.Int64(res.Duration.Milliseconds()),
		attrTimedOut.Bool(res.TimedOut), attrOOMKilled.Bool(res.OOMKilled), attrDiskLimit.Bool(res.DiskLimit),
		attrStdout.Int(len(res.Stdout)), attrStderr.Int(len(res.Stderr)), attrCut.Bool(res.StdoutTruncated || res.StderrTruncated))
	switch {
	case res.TimedOut:
		tracing.Fail(span, "the command timed out")
	case res.ExitCode != 0:
		tracing.Fail(span, fmt.Sprintf("the command exited with %d", res.ExitCode))
	}
}
