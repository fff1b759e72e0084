// Package workspace provides per-session working directories for running
// Agent Skills: a writable copy of each staged skill, scratch and output
// directories, per-command run directories, operator-allowed inputs, output
// collection by glob, a command lock and idle cleanup. It only manages files;
// running processes is the sandbox package's job.
//
// A workspace for session ID "s1" under the root (by default
// os.UserCacheDir()/skillkit/workspaces) looks like this:
//
//	s1/
//	  skills/<name>/   writable copy of the skill, refreshed when its source changes
//	    out    -> ../../out          convenience links, relative so the tree
//	    work   -> ../../work         can be mounted elsewhere (e.g. a container)
//	    inputs -> ../../work/inputs
//	  skills/.stage-*  a copy being staged (renamed into place when complete)
//	  work/            scratch space shared by the session's commands
//	  work/inputs/     copies of host inputs (CopyInput, CopyInputFiles)
//	  work/inputs/.copy-*  inputs being copied (renamed into place when complete)
//	  out/             files meant for the caller (Collect)
//	  runs/<run-id>/   one fresh directory per command (RUN_DIR)
//
// Commands may write anywhere in that tree, so the host keeps nothing of its
// own there. Its records live in the metadata root (Options.MetaRoot, by
// default <root>/.meta), which commands cannot reach:
//
//	.meta/
//	  sweep.lock, last-sweep
//	  s1/lock                 flocked while a command runs
//	  s1/used                 mtime: last use
//	  s1/staged/<name>.json   digests of the staged copy
//
// A directory under the root is a workspace only if it has a record: Open
// refuses to adopt a non-empty directory without one (ErrNotWorkspace), and
// Sweep never removes it.
//
// Inputs live in work/inputs rather than a top-level inputs/ so that a
// command's scratch space and its inputs share one writable tree; the inputs
// link inside each skill copy makes the documented relative path inputs/<file>
// work from the skill directory.
//
// Quickstart:
//
//	m, err := workspace.New(nil) // defaults: user cache dir, 24h TTL
//	ws, err := m.Open(ctx, sessionID)
//	unlock, err := ws.Lock(ctx) // one command at a time per workspace
//	defer unlock()
//	pdf, err := snap.ListedFS(ctx, "pdf") // a registry.Snapshot's skill as listed; for one folder, source.Dir("/skills/pdf", "", 0) and its FS
//	_, err = ws.Stage(ctx, "pdf", pdf)
//	run, err := ws.NewRun(ctx, "pdf")
//	// ... run the command with run.Environ() in run.SkillDir ...
//	out, err := ws.Collect(ctx, []string{"out/**"}, nil)
//
// What runs in a workspace beyond one command — a background command —
// is tied to it with Attach: it is closed before the workspace is removed
// and when the Manager closes.
//
// Idle workspaces (unused for longer than the TTL, not locked and with
// nothing attached) are
// removed with their records by Sweep, which Open also runs by itself when
// the last sweep is older than a quarter of the TTL, so nobody has to
// schedule it. Options.NoSweep turns this off, for a root that is a folder
// of the user's.
//
// Every path the host touches, in a workspace or in the metadata root, is
// resolved through an os.Root, so symbolic links a command plants cannot
// lead the host's reads or writes out of the directory they belong to; a
// file or link a command leaves in place of a layout directory is replaced
// by the directory when the workspace is opened or locked.
//
// Host files are opened without following symbolic links: by CopyInput
// always (CopyInputFiles takes files the caller opened, and checks with
// fstat that each is a regular file), and by Stage when src is a skill's file system from a registry
// snapshot or source.Dir, as in the quickstart, which opens beneath the
// skill folder without following links and without blocking on a FIFO.
// Stage checks every file it opens against its listing whatever src is,
// but os.DirFS follows links and can block in Open.
//
// # Tracing
//
// A Manager emits OpenTelemetry spans to Options.TracerProvider (nil: the
// global provider), each a child of the span in the call's context and
// carrying skillkit.workspace.id; a failed call records its error on its
// span. None holds a file's content or name, only counts and sizes:
//
//   - workspace.create: a workspace made (Open, or Lock after a sweep
//     removed it); skillkit.workspace.volume says whether it is a volume.
//   - workspace.stage.skill: one Stage; skillkit.skill.name,
//     skillkit.files, skillkit.bytes, skillkit.stage.outcome ("copied" or
//     "reused"), skillkit.stage.restored and skillkit.skipped (counts).
//   - workspace.stage.inputs: one CopyInput or CopyInputFiles;
//     skillkit.inputs (asked for), skillkit.files, skillkit.bytes,
//     skillkit.skipped.
//   - workspace.collect: one Collect; skillkit.collect.globs,
//     skillkit.files, skillkit.bytes (their sizes),
//     skillkit.collect.inline_bytes (the text inlined into the result,
//     which is read as each file is collected, within this span),
//     skillkit.collect.truncated, skillkit.skipped.
//   - workspace.cleanup: Sweep, Remove, Close, Discard and NewTemp's sweep
//     of dead processes' roots, told apart by skillkit.cleanup.op
//     ("sweep", "remove", "close", "discard", "sweep_temp");
//     skillkit.cleanup.removed counts what a sweep removed. Close takes no
//     context, so its span is a root.
//
// Running the command is not this package's: its workspace.run span comes
// from package tools, whose Executor calls the sandbox.
package workspace
