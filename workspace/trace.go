package workspace

import (
	"context"

	"github.com/skillkit/skillkit/internal/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the Manager's tracer: the package's import path.
const tracerName = "github.com/skillkit/skillkit/workspace"

// The names of the spans the package makes.
const (
	spanCreate      = "workspace.create"
	spanStageSkill  = "workspace.stage.skill"
	spanStageInputs = "workspace.stage.inputs"
	spanCollect     = "workspace.collect"
	spanCleanup     = "workspace.cleanup"
)

// The attributes of this package's spans besides the shared ones of
// package tracing.
const (
	attrVolume      = attribute.Key("skillkit.workspace.volume")
	attrOutcome     = attribute.Key("skillkit.stage.outcome")
	attrRestored    = attribute.Key("skillkit.stage.restored")
	attrInputs      = attribute.Key("skillkit.inputs")
	attrGlobs       = attribute.Key("skillkit.collect.globs")
	attrInlineBytes = attribute.Key("skillkit.collect.inline_bytes")
	attrTruncated   = attribute.Key("skillkit.collect.truncated")
	attrCleanupOp   = attribute.Key("skillkit.cleanup.op")
	attrRemoved     = attribute.Key("skillkit.cleanup.removed")
)

// The values of attrCleanupOp: which call cleaned up.
const (
	cleanupSweep     = "sweep"
	cleanupRemove    = "remove"
	cleanupClose     = "close"
	cleanupDiscard   = "discard"
	cleanupSweepTemp = "sweep_temp"
)

// start starts a span of the Manager's tracer, a child of the span in
// ctx.
func (m *Manager) start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return m.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// start starts a span about w.
func (w *Workspace) start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return w.m.start(ctx, name, append(attrs, tracing.WorkspaceID.String(w.id))...)
}
