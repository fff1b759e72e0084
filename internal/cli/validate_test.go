package cli

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
// validator's conformance data (testdata/validate-reference.json, copied
// from the project's conformance data, and
// testdata/validate-reference-extra.json, more verdicts of the same
// validator), from the parent folder as the reference was run, and
// expects its exit status and messages: stdout and stderr together are
// its output, and only the prefix of an "Invalid YAML in frontmatter:"
// message is compared (the detail is its YAML library's). Where the
// reference parsed the folder name as an option, and where it crashed,
// only the exit status is compared.
//
// validate adds "FILE:LINE: warning:" notes after a verdict where
// discovery reads the skill otherwise; they are no part of the
// reference's output and are taken out before comparing. For the
// conformance cases they are checked too: the cases in referenceNotes
// get exactly those notes, every other case none.
func TestValidateReference(t *testing.T) {
	for _, file := range []string{"validate-reference.json", "validate-reference-extra.json"} {
		t.Run(file, func(t *testing.T) {
			checkNotes := file == "validate-reference.json"
			data, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			var ref struct{ Cases []referenceCase }
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatal(err)
			}
			if len(ref.Cases) == 0 {
				t.Fatalf("no cases in testdata/%s", file)
			}
			parent := t.TempDir()
			for i, c := range ref.Cases {
				dir := c.Dir
				if c.Codepoints != nil {
					dir = fromCodepoints(t, c.Codepoints)
				}
				t.Run(strconv.Itoa(i)+"-"+c.Dir, func(t *testing.T) {
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
					if code != c.Exit {
						t.Fatalf("exit %d, reference %d\nstdout %q\nstderr %q\nreference %q", code, c.Exit, out, errOut, c.Stdout)
					}
					if c.Exit == 2 || strings.HasPrefix(c.Stdout, "Traceback") {
						return // the reference said nothing about the skill: its exit status is all
					}
					verdict, notes := splitNotes(dir, out+errOut)
					got, want := referenceLines(verdict), referenceLines(c.Stdout)
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("differs from the reference\ngot:  %q\nwant: %q", got, want)
					}
					if !checkNotes {
						return
					}
					wantNotes := referenceNotes[c.Dir]
					if len(notes) != len(wantNotes) {
						t.Fatalf("notes %q, want %d containing %q", notes, len(wantNotes), wantNotes)
					}
					for i, w := range wantNotes {
						if !strings.Contains(notes[i], w) {
							t.Errorf("note %d %q does not contain %q", i, notes[i], w)
						}
					}
				})
			}
		})
	}
}

// referenceNotes are the notes validate adds to the conformance cases:
// where discovery skips a skill the reference accepts, or reads it
// otherwise.
var referenceNotes = map[string][]string{
	"bom":                 {"bom/SKILL.md:1: warning: SKILL.md starts with a UTF-8 byte-order mark: discovery reads past it, but skillkit validate and the Agent Skills reference validator reject the file"},
	"cafe\u0301":          {`SKILL.md:2: warning: skillkit's discovery skips this skill: name "café" is valid in the Agent Skills spec, which allows lowercase letters of any script, but the skill tool accepts only ASCII names (^[a-z0-9]+(?:-[a-z0-9]+)*$`},
	"caf\u00e9":           {`name "cafe\u0301" is read as its NFKC normalisation "caf\u00e9"`, `skillkit's discovery skips this skill: name "café" is valid in the Agent Skills spec`},
	"dashes-in-desc":      {`dashes-in-desc/SKILL.md:2: warning: "---" inside the front matter: discovery reads on to the closing --- line, but skillkit validate and the Agent Skills reference validator end the front matter at the first "---" anywhere`},
	"foo":                 {`foo/SKILL.md:2: warning: name "ｆｏｏ" is read as its NFKC normalisation "foo"`},
	"lower-file":          {"lower-file/skill.md:1: warning: skillkit's discovery reads only SKILL.md and skips this skill: rename skill.md to SKILL.md"},
	"metadata-types":      {`metadata-types/SKILL.md:8: warning: metadata entry "nested" is not a string value; ignored`},
	"name-trailing-space": {"name-trailing-space/SKILL.md:2: warning: name has surrounding spaces; trimmed"},
	"\u00e4rger":          {`skillkit's discovery skips this skill: name "ärger" is valid in the Agent Skills spec, which allows lowercase letters of any script, but the skill tool accepts only ASCII names (^[a-z0-9]+(?:-[a-z0-9]+)*$: a-z, 0-9 and single hyphens), so the skill is skipped; rename the skill and its folder ("arger", say)`},
	"\ufb01x":             {`is read as its NFKC normalisation "fix"`},
}

// notePattern matches a note of validate about the skill in dir: a
// "FILE:LINE: warning:" line naming its SKILL.md.
func notePattern(dir string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(dir) + `/(SKILL|skill)\.md(:\d+)?: warning: `)
}

// splitNotes takes validate's notes about the skill in dir out of its
// output.
func splitNotes(dir, out string) (verdict string, notes []string) {
	re := notePattern(dir)
	var keep []string
	for _, l := range strings.SplitAfter(out, "\n") {
		if re.MatchString(l) {
			notes = append(notes, strings.TrimSuffix(l, "\n"))
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, ""), notes
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

// TestValidateNotes checks the notes validate adds after a verdict where
// discovery reads the skill otherwise, one case per kind of note, and
// that a skill both read alike gets none.
func TestValidateNotes(t *testing.T) {
	tests := []struct {
		name, file, content string
		wantOut             string // the verdict line on stdout, or "" for a failure
		wantNotes           []string
	}{
		{"read alike", "SKILL.md", "---\nname: skill\ndescription: d\n---\nBody\n", "Valid skill: skill\n", nil},
		{"lone lower-case skill.md", "skill.md", "---\nname: skill\ndescription: d\n---\n", "Valid skill: skill\n",
			[]string{"skill/skill.md:1: warning: skillkit's discovery reads only SKILL.md and skips this skill: rename skill.md to SKILL.md"}},
		{"--- after the name: the reference reads a shorter description", "SKILL.md", "---\nname: skill\ndescription: a --- b\n---\n", "Valid skill: skill\n",
			[]string{`skill/SKILL.md:3: warning: "---" inside the front matter: discovery reads on to the closing --- line`}},
		{"--- and no closing line: discovery skips it", "SKILL.md", "---\nname: skill\ndescription: a --- b\n", "Valid skill: skill\n",
			[]string{"skill/SKILL.md:1: warning: skillkit's discovery skips this skill: SKILL.md frontmatter not properly closed with ---"}},
		{"byte-order mark", "SKILL.md", "\xEF\xBB\xBF---\nname: skill\ndescription: d\n---\n", "",
			[]string{"skill/SKILL.md:1: warning: SKILL.md starts with a UTF-8 byte-order mark"}},
		{"nobody can invoke it: a discovery warning, shown for a valid skill only", "SKILL.md",
			"---\nname: skill\ndescription: d\ndisable-model-invocation: true\nuser-invocable: false\n---\n", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			mustMkdir(t, filepath.Join(base, "skill"))
			mustWrite(t, filepath.Join(base, "skill", tc.file), tc.content)
			t.Chdir(base)
			out, errOut, code := run(t, "validate", "skill")
			if out != tc.wantOut || (code == 0) != (tc.wantOut != "") {
				t.Fatalf("exit %d, stdout %q; want %q", code, out, tc.wantOut)
			}
			_, notes := splitNotes("skill", errOut)
			if len(notes) != len(tc.wantNotes) {
				t.Fatalf("notes %q, want %q", notes, tc.wantNotes)
			}
			for i, w := range tc.wantNotes {
				if !strings.HasPrefix(notes[i], w) {
					t.Errorf("note %q does not start with %q", notes[i], w)
				}
			}
		})
	}
}

// TestValidateSaysWhatItPassedOver checks that validate, given a folder
// of skills, says what discovery says about the search: skills below the
// depth and symlink loops.
func TestValidateSaysWhatItPassedOver(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c", "d", "e", "s")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "SKILL.md"), []byte("---\nname: s\ndescription: d\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(root, "loop")); err != nil {
		t.Skipf("cannot make symbolic links here: %v", err)
	}
	_, errOut, code := run(t, "validate", root)
	for _, want := range []string{
		"  - Missing required file: SKILL.md\n",
		root + ": warning: 1 skill folder lies below the search depth of 4 levels, not read (the deepest 6 levels down); search 6 levels deep",
		filepath.Join(root, "loop") + ": warning: symlink loop:",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != 1 || strings.Contains(errOut, "no skills found") {
		t.Errorf("exit %d, stderr %q; want 1 and no repeat of the missing SKILL.md", code, errOut)
	}
	out, errOut, code := run(t, "validate", "--depth", "6", root)
	if code != 0 || out != "Valid skill: "+deep+"\n" || strings.Contains(errOut, "below the search depth") {
		t.Errorf("--depth 6: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
