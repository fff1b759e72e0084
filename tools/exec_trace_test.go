package tools

import (
	"encoding/json"
	"testing"

	"github.com/skillkit/skillkit/internal/tracing/tracingtest"
	"github.com/skillkit/skillkit/workspace"
	"go.opentelemetry.io/otel/attribute"
)

// TestWorkspaceExecSpans runs workspace_exec twice in the isolated
// sandbox, with the workspaces and the tool tracing to one provider, and
// checks the spans of each call: the workspace is made by the first, and
// the Manager's first sweep is in it, the loaded skill copied by the first and reused by the second, the command
// run and its outputs collected, all under the span of the call.
func TestWorkspaceExecSpans(t *testing.T) {
	tp, rec := tracingtest.Recorder(t)
	m, err := workspace.New(&workspace.Options{Root: t.TempDir(), InMemoryVolumes: true, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	tool, err := WorkspaceExec(WorkspaceExecConfig{Runner: isolatedRunner(t), Workspaces: m, Options: &ExecOptions{TracerProvider: tp}})
	if err != nil {
		t.Fatal(err)
	}
	snap := examplesSnapshot(t)
	man, _, err := snap.Manifest(t.Context(), "csv-stats")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "content-never-in-a-span"
	ws := tracingtest.Str("session-1")
	staged := func(outcome string) tracingtest.Want {
		return tracingtest.Want{Name: "workspace.stage.skill", Parent: "call", Attrs: map[attribute.Key]attribute.Value{
			"skillkit.workspace.id": ws, "skillkit.skill.name": tracingtest.Str("csv-stats"),
			"skillkit.files": tracingtest.Int(len(man.Files)), "skillkit.bytes": tracingtest.Int64(man.Bytes),
			"skillkit.stage.outcome": tracingtest.Str(outcome),
		}}
	}
	ran := func(exit int) tracingtest.Want {
		return tracingtest.Want{Name: "workspace.run", Parent: "call", Failed: exit != 0, Attrs: map[attribute.Key]attribute.Value{
			"skillkit.workspace.id": ws, "skillkit.skill.name": tracingtest.Str("csv-stats"),
			"process.exit.code": tracingtest.Int(exit), "skillkit.run.runner": tracingtest.Str("isolated"),
			"skillkit.run.timed_out": tracingtest.Bool(false), "skillkit.run.oom_killed": tracingtest.Bool(false),
			"skillkit.run.stdout_bytes": tracingtest.Int(len(secret) + 1),
		}}
	}
	collected := tracingtest.Want{Name: "workspace.collect", Parent: "call", Attrs: map[attribute.Key]attribute.Value{
		"skillkit.workspace.id": ws, "skillkit.collect.globs": tracingtest.Int(1), "skillkit.files": tracingtest.Int(1),
		"skillkit.bytes": tracingtest.Int64(int64(len(secret))), "skillkit.collect.inline_bytes": tracingtest.Int64(int64(len(secret))),
		"skillkit.collect.truncated": tracingtest.Bool(false),
	}}
	call := tracingtest.Want{Name: "call"}
	for i, tc := range []struct {
		name    string
		command string
		isError bool
		want    []tracingtest.Want
	}{
		{"the first call makes the workspace", "echo " + secret + "; printf " + secret + " > ../../out/a.txt", false, []tracingtest.Want{
			{Name: "workspace.create", Parent: "call", Attrs: map[attribute.Key]attribute.Value{"skillkit.workspace.id": ws}},
			// The first Open of a Manager sweeps, as no sweep is recorded.
			{Name: "workspace.cleanup", Parent: "call", Attrs: map[attribute.Key]attribute.Value{
				"skillkit.cleanup.op": tracingtest.Str("sweep"), "skillkit.cleanup.removed": tracingtest.Int(0)}},
			staged("copied"), ran(0), collected, call,
		}},
		{"a command that fails", "echo " + secret + "; exit 3", true, []tracingtest.Want{
			staged("reused"), ran(3), collected, call,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.Ended())
			args, err := json.Marshal(map[string]any{"command": tc.command, "cwd": "skills/csv-stats", "output_files": []string{"out/**"}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, span := tp.Tracer("test").Start(t.Context(), "call")
			res, err := tool.Call(ctx, Call{Args: args, Skills: snap, State: execLoaded{"csv-stats"}, SessionID: "session-1"})
			span.End()
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.isError {
				t.Fatalf("call %d: result %s, want an error %v", i+1, res.Text, tc.isError)
			}
			spans := rec.Ended()[before:]
			tracingtest.Check(t, spans, tc.want)
			tracingtest.NoContent(t, spans, secret, "echo", "name: csv-stats")
		})
	}
}
