package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

func newValidate(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "validate PATH...",
		Short: "Validate skills strictly against the Agent Skills specification",
		Long: "validate checks each PATH — a skill folder, a SKILL.md file, or a folder holding skills —\n" +
			"against the Agent Skills specification, with the reference validator's messages and output:\n" +
			"\"Valid skill: P\" on stdout, or \"Validation failed for P:\" and one \"  - message\" line per\n" +
			"problem on stderr. The exit status is 1 when any skill fails.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := false
			for _, arg := range args {
				for _, t := range validationTargets(arg) {
					if len(t.errs) == 0 {
						t.errs = skill.Validate(os.DirFS(t.dir), dirNameOf(t.dir))
					}
					if len(t.errs) == 0 {
						fmt.Fprintf(env.Stdout, "Valid skill: %s\n", t.dir)
						continue
					}
					failed = true
					fmt.Fprintf(env.Stderr, "Validation failed for %s:\n", t.dir)
					for _, e := range t.errs {
						fmt.Fprintf(env.Stderr, "  - %s\n", e)
					}
				}
			}
			if failed {
				return exitError{1}
			}
			return nil
		},
	}
}

type target struct {
	dir  string
	errs []string // set when the path is wrong before any SKILL.md is read
}

// validationTargets resolves one PATH argument into the skill folders to
// validate: the folder of a SKILL.md file, a skill folder, or every skill
// folder under a root (to the discovery depth).
func validationTargets(arg string) []target {
	p := filepath.Clean(arg)
	info, err := os.Stat(p)
	if err != nil {
		return []target{{dir: p, errs: []string{"Path does not exist: " + p}}}
	}
	if !info.IsDir() {
		base := filepath.Base(p)
		if base == skill.FileName || base == "skill.md" {
			return []target{{dir: filepath.Dir(p)}}
		}
		return []target{{dir: p, errs: []string{"Not a directory: " + p}}}
	}
	if hasSkillFile(p) {
		return []target{{dir: p}}
	}
	var out []target
	findSkillDirs(p, 0, &out)
	if len(out) == 0 {
		return []target{{dir: p, errs: []string{"Missing required file: SKILL.md"}}}
	}
	return out
}

func hasSkillFile(dir string) bool {
	for _, n := range []string{skill.FileName, "skill.md"} {
		if info, err := os.Stat(filepath.Join(dir, n)); err == nil && !info.IsDir() {
			return true
		}
	}
	return false
}

// findSkillDirs collects folders holding a SKILL.md below dir, not
// searching inside skill folders, to the discovery depth.
func findSkillDirs(dir string, depth int, out *[]target) {
	if depth >= source.DefaultMaxDepth {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		*out = append(*out, target{dir: dir, errs: []string{"Cannot read folder: " + err.Error()}})
		return
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if skill.IgnoredDir(e.Name()) {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		link := e.Type()&fs.ModeSymlink != 0
		if link {
			if info, err := os.Stat(sub); err != nil || !info.IsDir() {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		if hasSkillFile(sub) {
			*out = append(*out, target{dir: sub})
			continue
		}
		if link {
			continue // as in discovery: a linked folder is followed only to a skill
		}
		findSkillDirs(sub, depth+1, out)
	}
}

func dirNameOf(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return filepath.Base(abs)
	}
	return filepath.Base(dir)
}
