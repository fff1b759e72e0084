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

// The private /etc is a snapshot the runner makes once, when it is
// created: generated identity and name-service files, and copies of the
// host's /etc entries programs need (the dynamic loader's cache, TLS
// roots, alternatives, Python's and the fonts' configuration, ...). Each
// call binds it read-only with one mount, which costs far less than
// assembling /etc per call. Only what any user of the host may read is
// copied, so the snapshot shows the sandbox nothing its own uid could not
// read; it does not follow later changes to the host's /etc.

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

// Bounds of a snapshot: per file, in all, and in entries.
const (
	maxEtcFile    = 1 << 20
	maxEtcTotal   = 32 << 20
	maxEtcEntries = 5000
	maxEtcDepth   = 6
)

// newEtcSnapshot makes a snapshot directory holding resolvConf as
// resolv.conf and returns its path.
func newEtcSnapshot(resolvConf []byte) (string, error) {
	self, err := owner.Self()
	if err != nil {
		return "", fmt.Errorf("sandbox: /etc snapshot: %w", err)
	}
	dir, err := os.MkdirTemp("", etcPrefix+self+"-")
	if err != nil {
		return "", fmt.Errorf("sandbox: /etc snapshot: %w", err)
	}
	// The sandbox uid (another uid than ours when we are root) reads it.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: /etc snapshot: %w", err)
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
			return "", fmt.Errorf("sandbox: /etc snapshot: %w", err)
		}
	}
	c := &etcCopy{}
	for _, name := range rootEtcEntries {
		if err := c.copy(filepath.Join("/etc", name), filepath.Join(dir, name), 0); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("sandbox: /etc snapshot of /etc/%s: %w", name, err)
		}
	}
	return dir, nil
}

// etcCopy copies host /etc entries within the snapshot's bounds.
type etcCopy struct {
	bytes   int64
	entries int
}

// copy copies src to dst: a symbolic link as a link (its target resolves
// inside the sandbox), a world-readable regular file, or a world-readable
// and searchable directory, recursively. Anything else is skipped.
func (c *etcCopy) copy(src, dst string, depth int) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.entries++; c.entries > maxEtcEntries || depth > maxEtcDepth {
		return nil // bounded: the rest is left out
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
		return os.WriteFile(dst, b, 0o444)
	case fi.IsDir():
		if fi.Mode().Perm()&0o005 != 0o005 {
			return nil
		}
		if err := os.Mkdir(dst, 0o755); err != nil {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := c.copy(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), depth+1); err != nil {
				return err
			}
		}
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
