//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillkit/skillkit/internal/owner"
)

// The private /etc is a snapshot the runner makes when it first runs a
// command: generated identity and name-service files, and copies of the
// small host /etc files programs need (the dynamic loader's cache,
// localtime, protocols, services, ...), with their modification times.
// Each call binds it read-only with one mount, and binds the host's /etc
// directories programs need (TLS roots, alternatives, Python's and the
// fonts' configuration, ...) read-only onto empty folders in it: copying
// those trees costs far more than a mount. Only files any user of the host
// may read are copied, so the snapshot shows the sandbox nothing its own
// uid could not read; the copied files do not follow later changes to the
// host's.

// etcPrefix starts a snapshot's directory name in os.TempDir(), followed by
// the owner process ("<pid>-<starttime>") and a random part, so that a
// later runner can remove those of dead processes.
const etcPrefix = "skillkit-etc-"

// Host /etc entries copied into the snapshot; missing ones are skipped.
var rootEtcEntries = []string{
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
	"ca-certificates.conf", "localtime", "timezone", "mime.types", "locale.alias", "host.conf",
	"gai.conf", "protocols", "services", "debian_version", "os-release", "python3",
	"python3.11", "python3.12", "python3.13", "fonts", "magic", "mailcap", "inputrc", "perl",
}

// Bounds of a snapshot's copied files: each, and in all.
const (
	maxEtcFile  = 1 << 20
	maxEtcTotal = 8 << 20
)

// etcSnapshot is a snapshot directory and the host /etc directories bound
// onto it per call.
type etcSnapshot struct {
	dir  string
	dirs []string
}

// newEtcSnapshot makes a snapshot holding resolvConf as resolv.conf.
func newEtcSnapshot(resolvConf []byte) (*etcSnapshot, error) {
	self, err := owner.Self()
	if err != nil {
		return nil, fmt.Errorf("sandbox: /etc snapshot: %w", err)
	}
	dir, err := os.MkdirTemp("", etcPrefix+self+"-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: /etc snapshot: %w", err)
	}
	// The sandbox uid (another uid than ours when we are root) reads it.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: /etc snapshot: %w", err)
	}
	generated := map[string]string{
		// The command is uid 0 of its own user namespace; it owns the
		// workspace and nothing else.
		"passwd":        "root:x:0:0:skillkit sandbox:" + WorkspaceDir + ":/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":         "root:x:0:\nnogroup:x:65534:\n",
		"hosts":         "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		"hostname":      "sandbox\n",
		"nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n",
		"resolv.conf":   string(resolvConf),
	}
	for name, content := range generated {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o444); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("sandbox: /etc snapshot: %w", err)
		}
	}
	snap := &etcSnapshot{dir: dir}
	c := &etcCopy{}
	for _, name := range rootEtcEntries {
		src, dst := filepath.Join("/etc", name), filepath.Join(dir, name)
		if fi, err := os.Stat(src); err == nil && fi.IsDir() {
			// A folder (or a link to one) is bound per call onto an
			// empty folder of the same name, if others may enter it.
			if fi.Mode().Perm()&0o005 != 0o005 {
				continue
			}
			if err := os.Mkdir(dst, 0o755); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("sandbox: /etc snapshot: %w", err)
			}
			snap.dirs = append(snap.dirs, name)
			continue
		}
		if err := c.copy(src, dst); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("sandbox: /etc snapshot of %s: %w", src, err)
		}
	}
	return snap, nil
}

// etcCopy copies host /etc files within the snapshot's bounds.
type etcCopy struct {
	bytes int64
}

// copy copies src to dst: a symbolic link as a link (its target resolves
// inside the sandbox) or a world-readable regular file with its
// modification time. Anything else is skipped.
func (c *etcCopy) copy(src, dst string) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case fi.Mode().IsRegular():
		if fi.Mode().Perm()&0o004 == 0 || fi.Size() > maxEtcFile || c.bytes+fi.Size() > maxEtcTotal {
			return nil
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		c.bytes += int64(len(b))
		if err := os.WriteFile(dst, b, 0o444); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	}
	return nil
}

// sweepEtcSnapshots removes the snapshots of this user's dead processes.
func sweepEtcSnapshots() {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), etcPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		who, _, ok := owner.Parse(rest)
		if !ok || owner.Alive(who) {
			continue
		}
		p := filepath.Join(tmp, e.Name())
		if fi, err := os.Lstat(p); err == nil && ownedByMe(fi) {
			_ = os.RemoveAll(p)
		}
	}
}
