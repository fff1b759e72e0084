// Package tracing is what skillkit's packages share to emit OpenTelemetry
// spans: the tracer of a configured provider (or of the global one), and
// the way a span ends with an error. Every package that traces takes a
// trace.TracerProvider in its own options; nothing here holds state.
package tracing

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Tracer returns the tracer named name (the calling package's import
// path) of tp, or of otel.GetTracerProvider() when tp is nil. The global
// provider is a no-op until the application installs one, and tracers
// taken from it before then follow the one installed later.
func Tracer(tp trace.TracerProvider, name string) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(name)
}

// End ends span, first recording err on it (an exception event and an
// Error status with err's text) when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Fail marks span as failed where there is no Go error to record, such as
// a command that exited non-zero or a tool result the model sees as an
// error: why says what failed, in words that hold no content.
func Fail(span trace.Span, why string) {
	span.SetStatus(codes.Error, why)
}

// The attributes more than one package sets, so that a workspace and a
// skill have one name in every span. None holds content: names, counts
// and sizes only.
const (
	// WorkspaceID is the workspace's ID (the session's, or its digest).
	WorkspaceID = attribute.Key("skillkit.workspace.id")
	// SkillName is the skill a span is about.
	SkillName = attribute.Key("skillkit.skill.name")
	// Files counts the regular files a span staged, copied or collected.
	Files = attribute.Key("skillkit.files")
	// Bytes is the size of those files.
	Bytes = attribute.Key("skillkit.bytes")
	// Skipped counts the entries left out, with a reason the result
	// carries.
	Skipped = attribute.Key("skillkit.skipped")
)
