package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// bigSkill writes a skill "big" of n files (SKILL.md and n-1 more) into
// a new root and returns the root.
func bigSkill(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	dir := writeSkill(t, root, "big", "---\nname: big\ndescription: Many files.\n---\nBody\n")
	for i := 1; i < n; i++ {
		mustWrite(t, filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)), "x\n")
	}
	return root
}

// TestFilesLimit lists, counts, catalogs, shows and stages a skill at
// and over the files-per-skill limit: over it, the skill stays listed and
// usable with its first files, flagged files_truncated (FLAGS
// "truncated"), with one warning per command that lists its files (list,
// tokens, exec) naming the count and --max-files; exec stages only those
// files; --max-files raises the limit.
func TestFilesLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		files int
		args  []string
		want  int // files listed and staged
		trunc bool
		warn  string // in the one warning; "" for none
	}{
		{name: "512 files at the default limit", files: 512, want: 512},
		{name: "513 files over the default limit", files: 513, want: 512, trunc: true,
			warn: "skill has 513 files, more than the 512 a skill may hold: only the first 512 files"},
		{name: "513 files with --max-files 513", files: 513, args: []string{"--max-files", "513"}, want: 513},
		{name: "6 files over --max-files 5", files: 6, args: []string{"--max-files", "5"}, want: 5, trunc: true,
			warn: "raise the files-per-skill limit (--max-files) to 6 or more"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := bigSkill(t, c.files)
			warnings := func(cmd, errOut string) {
				t.Helper()
				n := strings.Count(errOut, "warning:")
				switch {
				case c.warn == "" && n > 0:
					t.Errorf("%s: stderr %q, want no warning", cmd, errOut)
				case c.warn != "" && (n != 1 || !strings.Contains(errOut, c.warn) || !strings.Contains(errOut, filepath.Join(root, "big")+": warning:")):
					t.Errorf("%s: stderr %q, want one warning naming the skill's folder and %q", cmd, errOut, c.warn)
				}
			}

			out, errOut, code := run(t, append(append([]string{"list", "--json"}, c.args...), root)...)
			if code != 0 {
				t.Fatalf("list --json: exit %d: %s", code, errOut)
			}
			var items []listItem
			if err := json.Unmarshal([]byte(out), &items); err != nil || len(items) != 1 {
				t.Fatalf("list --json: %v in %s", err, out)
			}
			if it := items[0]; it.Files != c.want || it.FilesTruncated != c.trunc || it.Error != "" {
				t.Errorf("list --json: files %d, files_truncated %v, error %q; want %d, %v and none", it.Files, it.FilesTruncated, it.Error, c.want, c.trunc)
			}
			if got := strings.Contains(out, `"files_truncated"`); got != c.trunc {
				t.Errorf("list --json: files_truncated present %v, want %v (omitted when false)", got, c.trunc)
			}
			warnings("list --json", errOut)

			out, errOut, code = run(t, append(append([]string{"list"}, c.args...), root)...)
			if code != 0 || strings.Contains(out, "truncated") != c.trunc || !strings.Contains(out, fmt.Sprintf(" %d ", c.want)) {
				t.Errorf("list: exit %d, output %q; want FILES %d and the flag truncated: %v", code, out, c.want, c.trunc)
			}
			warnings("list", errOut)

			_, errOut, code = run(t, append(append([]string{"tokens", "--json"}, c.args...), root)...)
			if code != 0 {
				t.Errorf("tokens: exit %d: %s", code, errOut)
			}
			warnings("tokens", errOut)

			// The catalog and the skill tool read no file list: the skill
			// is offered and shown as any other, without a word.
			out, errOut, code = run(t, append(append([]string{"catalog", "--format", "list"}, c.args...), root)...)
			if code != 0 || !strings.Contains(out, "big") || errOut != "" {
				t.Errorf("catalog: exit %d, %q, stderr %q", code, out, errOut)
			}
			out, errOut, code = run(t, append(append([]string{"show", "big"}, c.args...), root)...)
			if code != 0 || !strings.Contains(out, "Body") || errOut != "" {
				t.Errorf("show: exit %d, %q, stderr %q", code, out, errOut)
			}

			args := append(append([]string{"exec", "--local", "--skill", "big"}, c.args...), root, "--", "sh", "-c", "find . -type f | wc -l")
			out, errOut, code = run(t, args...)
			if code != 0 || strings.TrimSpace(out) != fmt.Sprint(c.want) {
				t.Errorf("exec: exit %d, %q files staged, want %d; stderr %s", code, strings.TrimSpace(out), c.want, errOut)
			}
			warnings("exec", strings.ReplaceAll(errOut, "WARNING", "")) // --local's own warnings
		})
	}
}

// TestFilesLimitNote checks the note exec --json adds for a staged skill
// whose files were cut at the limit.
func TestFilesLimitNote(t *testing.T) {
	root := bigSkill(t, 6)
	res, _, code := execJSON(t, "--local", "--skill", "big", "--max-files", "5", root, "--", "true")
	if code != 0 || len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "skill big holds 6 files, more than a skill may hold: only 5 of its files") {
		t.Errorf("exit %d, notes %q; want one on the truncated skill", code, res.Notes)
	}
}

func TestLimitFlagsRefused(t *testing.T) {
	root := bigSkill(t, 2)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--max-files", "0", root}, "--max-files is 0; give a number of files from 1 to 1000000 (default 512)"},
		{[]string{"catalog", "--max-files", "-3", root}, "--max-files is -3"},
		{[]string{"show", "big", "--max-files", "2000000", root}, "--max-files is 2000000"},
		{[]string{"tokens", "--max-bytes", "0", root}, "--max-bytes is 0; give a positive number of bytes (default 16777216, 16 MiB)"},
		{[]string{"exec", "--local", "--skill", "big", "--max-bytes", "-1", root, "--", "true"}, "--max-bytes is -1"},
		{[]string{"session", "new", "--store", filepath.Join(t.TempDir(), "s.db"), "--max-files", "0", root}, "--max-files is 0"},
	} {
		_, errOut, code := run(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestExecListingLeftOut stages a skill whose listing leaves a link out
// (it leads out of the skill): the link is not staged, exec says so once
// on stderr (the listing's warning, naming the host path) and in the
// notes of --json.
func TestExecListingLeftOut(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	dir := writeSkill(t, root, "s", "---\nname: s\ndescription: A link out.\n---\nBody\n")
	mustWrite(t, filepath.Join(outside, "secret.md"), "secret\n")
	mustSymlink(t, filepath.Join(outside, "secret.md"), filepath.Join(dir, "leak.md"))
	out, errOut, code := run(t, "exec", "--local", "--skill", "s", root, "--", "sh", "-c", "ls")
	if code != 0 || strings.Contains(out, "leak.md") {
		t.Errorf("exec: exit %d, files %q; want leak.md not staged", code, out)
	}
	lines := 0
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "leak.md") {
			lines++
		}
	}
	if lines != 1 || !strings.Contains(errOut, filepath.Join(dir, "leak.md")+": warning: symlink skipped") {
		t.Errorf("stderr %q; want one warning about leak.md", errOut)
	}
	res, _, code := execJSON(t, "--local", "--skill", "s", root, "--", "true")
	if code != 0 || len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0], "skills/s/leak.md was not staged: symlink skipped") {
		t.Errorf("exit %d, notes %q; want one saying leak.md was not staged", code, res.Notes)
	}
}
