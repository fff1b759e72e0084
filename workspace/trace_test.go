package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillkit/skillkit/internal/tracing/tracingtest"
	"go.opentelemetry.io/otel/attribute"
)

// attrs is a shorthand for the attributes a tracingtest.Want names.
type attrs = map[attribute.Key]attribute.Value

// TestSpans runs a workspace's life, each step under a span of its own,
// and checks the spans each step makes: their names, that they are
// children of the step's span, their counts and sizes, and that a failure
// fails its span. No span may hold a file's content.
func TestSpans(t *testing.T) {
	const (
		skillBody = "---\nname: demo\ndescription: A demo.\n---\nskill-body-text\n"
		script    = "echo script-text\n"
		input     = "input-text\n"
		output    = "output-text"
	)
	src := t.TempDir()
	writeFile(t, src, "SKILL.md", skillBody)
	writeFile(t, src, "scripts/run.sh", script)
	ageTree(t, src)
	allowed := t.TempDir()
	writeFile(t, allowed, "data.csv", input)
	tp, rec := tracingtest.Recorder(t)
	m := newTestManager(t, &Options{InputRoots: []string{allowed}, TracerProvider: tp})
	skill := os.DirFS(src)
	id := tracingtest.Str("s")
	var w *Workspace
	staged := func(outcome string) tracingtest.Want {
		return tracingtest.Want{Name: spanStageSkill, Parent: "step", Attrs: attrs{
			"skillkit.workspace.id": id, "skillkit.skill.name": tracingtest.Str("demo"),
			"skillkit.files": tracingtest.Int(2), "skillkit.bytes": tracingtest.Int64(int64(len(skillBody) + len(script))),
			"skillkit.stage.outcome": tracingtest.Str(outcome), "skillkit.stage.restored": tracingtest.Int(0),
		}}
	}
	sweep := tracingtest.Want{Name: spanCleanup, Parent: "step", Attrs: attrs{
		"skillkit.cleanup.op": tracingtest.Str("sweep"), "skillkit.cleanup.removed": tracingtest.Int(0)}}
	step := tracingtest.Want{Name: "step"}
	for _, tc := range []struct {
		name string
		do   func(ctx context.Context) error
		want []tracingtest.Want
	}{
		{"a new workspace", func(ctx context.Context) (err error) {
			w, err = m.Open(ctx, "s")
			return err
		}, []tracingtest.Want{
			{Name: spanCreate, Parent: "step", Attrs: attrs{"skillkit.workspace.id": id, "skillkit.workspace.volume": tracingtest.Bool(m.volumes)}},
			sweep, step, // the Manager's first Open sweeps: no sweep is recorded
		}},
		{"the workspace reopened", func(ctx context.Context) error {
			_, err := m.Open(ctx, "s")
			return err
		}, []tracingtest.Want{step}},
		{"a skill copied", func(ctx context.Context) error {
			_, err := w.Stage(ctx, "demo", skill)
			return err
		}, []tracingtest.Want{staged("copied"), step}},
		{"the skill reused", func(ctx context.Context) error {
			_, err := w.Stage(ctx, "demo", skill)
			return err
		}, []tracingtest.Want{staged("reused"), step}},
		{"a skill without a source", func(ctx context.Context) error {
			_, err := w.Stage(ctx, "none", nil)
			return ignore(err)
		}, []tracingtest.Want{
			{Name: spanStageSkill, Parent: "step", Failed: true, Attrs: attrs{"skillkit.skill.name": tracingtest.Str("none")}}, step,
		}},
		{"an input copied", func(ctx context.Context) error {
			_, err := w.CopyInput(ctx, filepath.Join(allowed, "data.csv"), "")
			return err
		}, []tracingtest.Want{
			{Name: spanStageInputs, Parent: "step", Attrs: attrs{"skillkit.workspace.id": id, "skillkit.inputs": tracingtest.Int(1),
				"skillkit.files": tracingtest.Int(1), "skillkit.bytes": tracingtest.Int64(int64(len(input)))}},
			step,
		}},
		{"an input outside the roots", func(ctx context.Context) error {
			_, err := w.CopyInput(ctx, src, "")
			return ignore(err)
		}, []tracingtest.Want{{Name: spanStageInputs, Parent: "step", Failed: true}, step}},
		{"open files copied", func(ctx context.Context) error {
			var files []InputFile
			for _, dest := range []string{"a.csv", "b/c.csv"} {
				f, err := os.Open(filepath.Join(allowed, "data.csv"))
				if err != nil {
					return err
				}
				defer f.Close()
				files = append(files, InputFile{File: f, Dest: dest})
			}
			_, err := w.CopyInputFiles(ctx, files)
			return err
		}, []tracingtest.Want{
			{Name: spanStageInputs, Parent: "step", Attrs: attrs{"skillkit.inputs": tracingtest.Int(2),
				"skillkit.files": tracingtest.Int(2), "skillkit.bytes": tracingtest.Int64(int64(2 * len(input)))}},
			step,
		}},
		{"outputs collected", func(ctx context.Context) error {
			if err := os.WriteFile(filepath.Join(w.OutputDir(), "a.txt"), []byte(output), 0o644); err != nil {
				return err
			}
			_, err := w.Collect(ctx, []string{"out/**", "work/none"}, nil)
			return err
		}, []tracingtest.Want{
			{Name: spanCollect, Parent: "step", Attrs: attrs{"skillkit.workspace.id": id, "skillkit.collect.globs": tracingtest.Int(2),
				"skillkit.files": tracingtest.Int(1), "skillkit.bytes": tracingtest.Int64(int64(len(output))),
				"skillkit.collect.inline_bytes": tracingtest.Int64(int64(len(output))), "skillkit.collect.truncated": tracingtest.Bool(false)}},
			step,
		}},
		{"a bad glob", func(ctx context.Context) error {
			_, err := w.Collect(ctx, []string{"../x"}, nil)
			return ignore(err)
		}, []tracingtest.Want{{Name: spanCollect, Parent: "step", Failed: true}, step}},
		{"the workspace removed", func(ctx context.Context) error {
			return m.Remove(ctx, "s")
		}, []tracingtest.Want{
			{Name: spanCleanup, Parent: "step", Attrs: attrs{"skillkit.cleanup.op": tracingtest.Str("remove"), "skillkit.workspace.id": id}}, step,
		}},
		{"a sweep", func(ctx context.Context) error {
			_, err := m.Sweep(ctx)
			return err
		}, []tracingtest.Want{sweep, step}},
		{"the Manager closed", func(context.Context) error {
			return m.Close()
		}, []tracingtest.Want{
			// Close takes no context: its span is a root.
			{Name: spanCleanup, Attrs: attrs{"skillkit.cleanup.op": tracingtest.Str("close")}}, step,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.Ended())
			ctx, span := tp.Tracer("test").Start(t.Context(), "step")
			err := tc.do(ctx)
			span.End()
			if err != nil {
				t.Fatal(err)
			}
			spans := rec.Ended()[before:]
			tracingtest.Check(t, spans, tc.want)
			tracingtest.NoContent(t, spans, "skill-body-text", "script-text", "input-text", "output-text")
		})
	}
}

// ignore drops the error a step expects, which its span records.
func ignore(error) error { return nil }

// TestTempSpans checks the cleanup spans of a temporary Manager: NewTemp's
// sweep of dead processes' roots and Discard.
func TestTempSpans(t *testing.T) {
	tp, rec := tracingtest.Recorder(t)
	ctx, span := tp.Tracer("test").Start(t.Context(), "step")
	m, err := NewTemp(ctx, &Options{InMemoryVolumes: true, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	span.End()
	tracingtest.Check(t, rec.Ended(), []tracingtest.Want{
		{Name: spanCleanup, Parent: "step", Attrs: attrs{"skillkit.cleanup.op": tracingtest.Str("sweep_temp")}},
		{Name: spanCleanup, Parent: "step", Attrs: attrs{"skillkit.cleanup.op": tracingtest.Str("discard")}},
		{Name: "step"},
	})
}
