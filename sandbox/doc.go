// Package sandbox runs commands for skills and tools with bounded output, a
// deadline that kills every descendant, a clean environment and — by
// default — confinement.
//
// Two [Runner] implementations exist:
//
//   - [NewIsolated] (the default on Linux) gives the command a world that
//     holds only what it may touch: a private root (read-only system
//     directories, a minimal /etc and /dev, a /proc with the kernel-wide
//     files masked, private /tmp and /dev/shm, the workspace at
//     [WorkspaceDir]), entered with pivot_root in new user, PID, mount, IPC,
//     UTS, cgroup and network namespaces. The command runs as an
//     unprivileged host uid with no capability, no_new_privs, a seccomp
//     filter, Landlock as a second layer, a fresh session keyring, no
//     inherited descriptor and no controlling terminal; a memory cgroup and a
//     pids cgroup per call, rlimits, and a workspace on a bounded filesystem
//     ([NewVolume]) bound what it consumes. A missing host feature is an
//     error ([*FeatureError]) that says what to do.
//   - [NewUnconfinedLocal] runs the command as a plain child process. It is
//     for trusted setups only and says so in its name and in a log line.
//
// Behaviour is added by wrapping, as with net/http handlers: [WithEnv]
// returns a Runner that injects per-call environment variables from the
// context without overriding keys the caller passed explicitly. Optional
// capabilities are discovered through the wrappers, io/fs style:
// [WorkspacePath] (where the command sees the workspace), [MaxTimeout]
// (the runner's ceiling) and [Start] (a command left running in the same
// confinement, with a pipe to its stdin, its output kept in bounded
// buffers for [Process.Read], and [Process.Kill] for its whole tree; both
// runners are a [Starter]).
//
// The isolated runner re-executes the current binary (/proc/self/exe) as
// the init process of the new namespaces; this package's init function
// recognises that invocation and never returns from it, so any binary that
// imports the package — including test binaries — works as its own helper.
// When the runner is root the helper runs as the sandbox uid, so the binary
// must be readable and executable by others (mode 755).
//
// Quick start:
//
//	vol, err := sandbox.NewVolume(ctx, dir, imagePath, nil) // 1 GiB, 100,000 inodes
//	if err != nil {
//		return err // *sandbox.FeatureError without root: see IsolatedOptions.UnboundedDisk
//	}
//	defer vol.Remove()
//	r, err := sandbox.NewIsolated(nil)
//	if err != nil {
//		return err // e.g. *sandbox.FeatureError naming the missing host feature
//	}
//	res, err := r.Run(ctx, sandbox.Spec{
//		Args:      []string{"/bin/sh", "-c", "echo hello > out.txt && cat out.txt"},
//		Workspace: dir,
//	})
//
// The workspace package makes a volume per workspace itself. docs/security.md
// lists what each runner guarantees and the test that shows it.
package sandbox
