package cli

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// referenceCase is one case of testdata/validate-reference.json: the
// verdicts of the Agent Skills reference validator (skills-ref) on
// hand-made skill folders, copied from the project's conformance data.
type referenceCase struct {
	Dir        string            `json:"dir"`
	Codepoints []string          `json:"dir_codepoints"`
	Files      map[string]string `json:"files"`
	Stdout     string            `json:"reference_stdout"`
	Exit       int               `json:"reference_exit"`
}

// TestValidateReference runs validate on every case of the reference
// validator's conformance data, from the parent folder as the reference
// was run, and expects its exit status and messages: stdout and stderr
// together are its output, and only the prefix of an "Invalid YAML in
// frontmatter:" message is compared (the detail is its YAML library's).
// Cases where the reference parsed the folder name as an option say
// nothing about validation, and of a crash only the exit status is
// compared. The cases skill.Validate does not yet agree on are listed,
// with the reason, in referenceGaps; the others pin validate's output.
func TestValidateReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "validate-reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Cases []referenceCase }
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) == 0 {
		t.Fatal("no cases in testdata/validate-reference.json")
	}
	parent := t.TempDir()
	t.Chdir(parent)
	for i, c := range ref.Cases {
		dir := c.Dir
		if c.Codepoints != nil {
			dir = fromCodepoints(t, c.Codepoints)
		}
		t.Run(strconv.Itoa(i)+"-"+c.Dir, func(t *testing.T) {
			if c.Exit == 2 {
				t.Skipf("the reference parsed %q as an option, not a path", c.Dir)
			}
			// Each case in its own folder: two cases share a name that
			// differs only in normalization, which some file systems fold.
			base := filepath.Join(parent, strconv.Itoa(i))
			if err := os.MkdirAll(filepath.Join(base, dir), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, b64 := range c.Files {
				content, err := base64.StdEncoding.DecodeString(b64)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(base, dir, name), content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(base)
			out, errOut, code := run(t, "validate", dir)
			crashed := strings.HasPrefix(c.Stdout, "Traceback") // its exit status is all it said
			got, want := referenceLines(out+errOut), referenceLines(c.Stdout)
			same := code == c.Exit && (crashed || strings.Join(got, "\n") == strings.Join(want, "\n"))
			if why, ok := referenceGaps[c.Dir]; ok {
				if same {
					t.Fatalf("now agrees with the reference: remove %q from referenceGaps", c.Dir)
				}
				t.Skipf("known gap: %s", why)
			}
			if !same {
				t.Errorf("differs from the reference\nexit %d, reference %d\ngot:  %q\nwant: %q", code, c.Exit, got, want)
			}
		})
	}
}

// referenceGaps are the cases where skill.Validate, as it stands, does
// not agree with the reference validator, and why. A case listed here
// that starts to agree fails the test, so the list stays true.
var referenceGaps = map[string]string{
	"anchor":         "the reference's YAML reader (strictyaml) refuses anchors and aliases; skill.Validate accepts them",
	"bom":            "the reference does not skip a byte-order mark before the opening ---; skill.Validate does",
	"caf\u00e9":      "the reference compares the name and the folder name NFKC-normalized; skill.Validate compares code points",
	"cafe\u0301":     "the reference compares the name and the folder name NFKC-normalized; skill.Validate compares code points",
	"foo":            "the reference NFKC-normalizes the name (fullwidth letters); skill.Validate does not",
	"dashes-in-desc": "the reference ends the front matter at the first --- anywhere, even inside a value; skill.Validate at a --- line",
	"metadata-flow":  "strictyaml refuses flow mappings and sequences; skill.Validate accepts them",
	"null":           "strictyaml reads null as text; skill.Validate as YAML null",
	"null-desc":      "strictyaml reads null as text; skill.Validate as YAML null",
	"tilde-desc":     "strictyaml reads ~ as text; skill.Validate as YAML null",
}

// fromCodepoints spells a folder name given as "U+XXXX" code points.
func fromCodepoints(t *testing.T, cps []string) string {
	t.Helper()
	var b strings.Builder
	for _, cp := range cps {
		r, err := strconv.ParseUint(strings.TrimPrefix(cp, "U+"), 16, 32)
		if err != nil {
			t.Fatalf("code point %q: %v", cp, err)
		}
		b.WriteRune(rune(r))
	}
	return b.String()
}

// referenceLines splits validator output into its header and one entry
// per "  - " message (continuation lines joined to their message), with
// an "Invalid YAML in frontmatter:" message cut to that prefix.
func referenceLines(s string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "  - "), len(out) == 0:
			out = append(out, line)
		default:
			out[len(out)-1] += "\n" + line
		}
	}
	const yamlPrefix = "  - Invalid YAML in frontmatter:"
	for i, l := range out {
		if strings.HasPrefix(l, yamlPrefix) {
			out[i] = yamlPrefix
		}
	}
	return out
}

// TestValidateLinks checks how validate reads through symbolic links and
// special files, now that it reads through the no-follow file system of
// source.Dir: a skill folder that is a link (given directly or found in
// a root) validates as it always did, a SKILL.md linked inside its folder
// is read where it leads, one linked outside is refused with a message
// that says what to do, and a FIFO named SKILL.md fails at once instead
// of blocking the command.
func TestValidateLinks(t *testing.T) {
	base := t.TempDir()
	elsewhere := t.TempDir()
	const good = "---\nname: %s\ndescription: Fine.\n---\nBody\n"
	real := writeSkill(t, elsewhere, "linked", strings.Replace(good, "%s", "linked", 1))

	root := filepath.Join(base, "root")
	mustMkdir(t, root)
	folderLink := filepath.Join(root, "linked")
	mustSymlink(t, real, folderLink)

	inside := filepath.Join(base, "inside")
	mustMkdir(t, filepath.Join(inside, "docs"))
	mustWrite(t, filepath.Join(inside, "docs", "skill.txt"), strings.Replace(good, "%s", "inside", 1))
	mustSymlink(t, "docs/skill.txt", filepath.Join(inside, "SKILL.md"))

	outside := filepath.Join(base, "outside")
	mustMkdir(t, outside)
	mustWrite(t, filepath.Join(elsewhere, "outside.md"), strings.Replace(good, "%s", "outside", 1))
	mustSymlink(t, filepath.Join(elsewhere, "outside.md"), filepath.Join(outside, "SKILL.md"))

	dangling := filepath.Join(base, "dangling")
	mustMkdir(t, dangling)
	mustSymlink(t, "nowhere.md", filepath.Join(dangling, "SKILL.md"))

	fifo := filepath.Join(base, "fifo")
	mustMkdir(t, fifo)
	if err := syscall.Mkfifo(filepath.Join(fifo, "skill.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}

	tests := []struct {
		name       string
		arg        string
		wantOut    string
		wantErr    string
		wantStatus int
	}{
		{"skill folder is a link", folderLink, "Valid skill: " + folderLink + "\n", "", 0},
		{"SKILL.md of a linked folder", filepath.Join(folderLink, "SKILL.md"), "Valid skill: " + folderLink + "\n", "", 0},
		{"root holding a linked skill folder", root, "Valid skill: " + folderLink + "\n", "", 0},
		{"SKILL.md linked inside the folder", inside, "Valid skill: " + inside + "\n", "", 0},
		{"SKILL.md linked outside the folder", outside, "", "Validation failed for " + outside + ":\n" +
			"  - Cannot read SKILL.md: SKILL.md points to the absolute path " + filepath.Join(elsewhere, "outside.md") +
			", outside the skill folder: path leads outside its root; skillkit reads a linked SKILL.md only inside its skill folder" +
			" (discovery skips this skill): put the file itself in the folder\n", 1},
		{"dangling SKILL.md link", dangling, "", "Validation failed for " + dangling + ":\n  - Missing required file: SKILL.md\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "validate", tc.arg)
			if out != tc.wantOut || errOut != tc.wantErr || code != tc.wantStatus {
				t.Errorf("got (%q, %q, %d)\nwant (%q, %q, %d)", out, errOut, code, tc.wantOut, tc.wantErr, tc.wantStatus)
			}
		})
	}

	t.Run("FIFO named skill.md", func(t *testing.T) {
		type result struct {
			errOut string
			code   int
		}
		done := make(chan result, 1)
		go func() {
			_, errOut, code := run(t, "validate", fifo)
			done <- result{errOut, code}
		}()
		select {
		case r := <-done:
			want := "Validation failed for " + fifo + ":\n  - Cannot read SKILL.md: open skill.md: not a regular file"
			if r.code != 1 || !strings.HasPrefix(r.errOut, want) {
				t.Errorf("got (%q, %d); want exit 1 and stderr starting %q", r.errOut, r.code, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("validate blocked on a FIFO")
		}
	})
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
