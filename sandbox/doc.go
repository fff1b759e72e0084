// Package sandbox runs commands for skills and tools with bounded output, a
// deadline that kills every descendant, a clean environment and — by
// default — confinement.
//
// Two [Runner] implementations exist:
//
//   - [NewIsolated] (the default on Linux) runs the command in new user,
//     network, PID, mount, UTS and IPC namespaces, under Landlock (read-only
//     system directories, one read-write workspace), with rlimits, a pids
//     cgroup bound, no capabilities and no_new_privs. A missing kernel
//     feature is an error ([*FeatureError]) unless the operator sets
//     [IsolatedOptions.AllowDowngrade].
//   - [NewUnconfinedLocal] runs the command as a plain child process. It is
//     for trusted setups only and says so in its name and in a log line.
//
// Behaviour is added by wrapping, as with net/http handlers: [WithEnv]
// returns a Runner that injects per-call environment variables from the
// context without overriding keys the caller passed explicitly.
//
// The isolated runner re-executes the current binary (/proc/self/exe) as a
// small init process for the new namespaces; this package's init function
// recognises that invocation and never returns from it, so any binary that
// imports the package — including test binaries — works as its own helper.
//
// Quick start:
//
//	r, err := sandbox.NewIsolated(nil)
//	if err != nil {
//		return err // e.g. *sandbox.FeatureError naming the missing kernel feature
//	}
//	res, err := r.Run(ctx, sandbox.Spec{
//		Args:      []string{"/bin/sh", "-c", "echo hello > out.txt && cat out.txt"},
//		Workspace: dir,
//	})
//
// docs/security.md lists what each runner guarantees and the test that
// shows it.
package sandbox
