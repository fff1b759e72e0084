package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillkit/skillkit/internal/owner"
	"github.com/skillkit/skillkit/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// tempPrefix starts the name of every temporary root: the prefix, the
// owner process ("<pid>-<starttime>") and a random part.
const tempPrefix = "skillkit-workspaces-"

// NewTemp returns a Manager over a fresh temporary root in os.TempDir(),
// for workspaces that end with the process: call Discard when done.
// opts.Root must be empty; the other options apply as in New. Temporary
// roots left behind by processes of this user that died without
// discarding them (kill -9) are removed first; roots of live processes and
// of other users are left alone.
func NewTemp(ctx context.Context, opts *Options) (*Manager, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Root != "" {
		return nil, fmt.Errorf("%w: Options.Root is %q; NewTemp makes its own root, leave it empty (or use New)", ErrInvalidOption, o.Root)
	}
	self, err := owner.Self()
	if err != nil {
		return nil, fmt.Errorf("workspace: temporary root: %w", err)
	}
	sweepTemp(ctx, tracing.Tracer(o.TracerProvider, tracerName))
	root, err := os.MkdirTemp("", tempPrefix+self+"-")
	if err != nil {
		return nil, fmt.Errorf("workspace: temporary root: %w", err)
	}
	o.Root = root
	m, err := New(&o)
	if err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	return m, nil
}

// Discard removes every workspace under the Manager's root, their
// volumes, and the root itself with its records, after ending what is
// attached to them (Attach: background commands). It is meant for
// Managers from NewTemp; no workspace may be in use.
func (m *Manager) Discard(ctx context.Context) (err error) {
	_, span := m.start(ctx, spanCleanup, attrCleanupOp.String(cleanupDiscard))
	defer func() { tracing.End(span, err) }()
	attached := m.closeAllAttached()
	if err := m.unmountAll(); err != nil {
		return errors.Join(attached, err)
	}
	errs := []error{attached}
	for _, dir := range []string{m.metaRoot, m.root} {
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("workspace: discard %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// sweepTemp removes the temporary roots of this user's dead processes,
// in a span of tracer (there is no Manager yet).
func sweepTemp(ctx context.Context, tracer trace.Tracer) {
	_, span := tracer.Start(ctx, spanCleanup, trace.WithAttributes(attrCleanupOp.String(cleanupSweepTemp)))
	removed := 0
	defer func() {
		span.SetAttributes(attrRemoved.Int(removed))
		span.End()
	}()
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return
		}
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		who, _, ok := owner.Parse(rest)
		if !ok || owner.Alive(who) || !ownedByMe(filepath.Join(tmp, e.Name())) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		inner, _ := os.ReadDir(dir)
		for _, w := range inner {
			_ = unmountVolume(filepath.Join(dir, w.Name()))
		}
		if os.RemoveAll(dir) == nil {
			removed++
		}
	}
}
