package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/source/archive"
)

// ---- Roots that are URLs or archive files (used by every command that
// takes ROOT arguments, through rootSources and defaultRoots). ----

// isArchiveRoot reports whether a ROOT argument names an archive: an
// http(s) URL, or an existing regular file named like an archive.
func isArchiveRoot(root string) bool {
	if source.IsURL(root) {
		return true
	}
	file, _, _ := strings.Cut(root, "#sha256=")
	info, err := os.Stat(file)
	return err == nil && info.Mode().IsRegular() && archive.IsArchivePath(file)
}

// archiveRootPath is an archive ROOT as a session keeps it: a URL as
// given, a file's path made absolute (with its pin, if any).
func archiveRootPath(root string) string {
	if source.IsURL(root) {
		return root
	}
	if abs, err := filepath.Abs(root); err == nil {
		return abs
	}
	return root
}

// openRoot returns the source of one ROOT argument of the given rank: an
// archive (URL or file, see package source/archive) unpacked into the
// cache, or a folder.
func (env *Env) openRoot(ctx context.Context, root string, rank int) (source.Source, error) {
	if !isArchiveRoot(root) {
		return source.Dir(root, root, rank)
	}
	src, err := archive.Open(ctx, root, env.archiveOptions())
	src.Rank = rank
	return src, err
}

// openURLRoot opens the URL entries of $SKILLKIT_PATH (source.OpenURLFunc).
func (env *Env) openURLRoot(ctx context.Context) source.OpenURLFunc {
	return func(url, label string, rank int) (source.Source, error) {
		src, err := archive.Open(ctx, url, env.archiveOptions())
		src.Rank = rank
		return src, err
	}
}

// archiveOptions are the options of archive roots: the cache directory
// of $SKILLKIT_CACHE_DIR (or $SKILLS_CACHE_DIR), warnings to stderr.
func (env *Env) archiveOptions() *archive.Options {
	return &archive.Options{
		CacheDir: archive.CacheDirFromEnv(env.Getenv),
		Warn:     func(msg string) { fmt.Fprintf(env.Stderr, "skillkit: warning: %s\n", msg) },
	}
}

// ---- skillkit install ----

func newInstall(env *Env) *cobra.Command {
	var user, project, force bool
	cmd := &cobra.Command{
		Use:   "install URL|PATH [--user | --project] [--force]",
		Short: "Install a skill, or every skill of a root, into ~/.agents/skills or the project's .agents/skills",
		Long: "install copies skills into a skill root: ~/.agents/skills with --user (the default), or the\n" +
			"project's .agents/skills with --project (in the nearest folder above the working directory\n" +
			"that holds .git, else in the working directory).\n\n" +
			"URL|PATH is an http(s) URL of a .zip, .tar, .tar.gz or .tgz archive (optionally ending in\n" +
			"#sha256=<hex>, checked before anything is unpacked), a local archive file, a skill folder or\n" +
			"a folder of skills; every skill found there (--depth levels deep) is installed. Archives are\n" +
			"cached in $SKILLKIT_CACHE_DIR (default: skillkit/archives in the user's cache folder).\n\n" +
			"Each skill is first validated strictly (as `skillkit validate`); an invalid skill is refused\n" +
			"with the validator's messages, and so is a skill whose folder exists already, unless --force\n" +
			"replaces it. Each skill is copied into a temporary folder beside its place and renamed into\n" +
			"place when complete. One line per skill installed goes to stdout; the exit status is 1 when\n" +
			"any skill was refused.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			depth, err := env.searchDepth()
			if err != nil {
				return err
			}
			dest, err := env.installDest(project)
			if err != nil {
				return err
			}
			return env.install(cmd.Context(), args[0], dest, depth, force)
		},
	}
	cmd.Flags().BoolVar(&user, "user", false, "install into ~/.agents/skills (the default)")
	cmd.Flags().BoolVar(&project, "project", false, "install into the project's .agents/skills")
	cmd.Flags().BoolVar(&force, "force", false, "replace a skill folder that exists already")
	cmd.MarkFlagsMutuallyExclusive("user", "project")
	addDepthFlag(cmd, env)
	return cmd
}

// installDest is the skill root install writes to.
func (env *Env) installDest(project bool) (string, error) {
	if project {
		cwd, err := env.workDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(source.ProjectRoot(cwd), ".agents", "skills"), nil
	}
	home := env.Getenv("HOME")
	if home == "" {
		return "", errors.New("install: $HOME is not set, so there is no ~/.agents/skills; set HOME or pass --project")
	}
	return filepath.Join(home, ".agents", "skills"), nil
}

// install installs every skill found at from into dest.
func (env *Env) install(ctx context.Context, from, dest string, depth int, force bool) error {
	var src source.Source
	var err error
	if isArchiveRoot(from) {
		src, err = archive.Open(ctx, from, env.archiveOptions())
	} else {
		src, err = source.Dir(from, from, 0)
	}
	if err != nil {
		return fmt.Errorf("argument URL|PATH: %w", err)
	}
	fromArchive := isArchiveRoot(from)
	src.MaxDepth = depth
	res, err := source.Discover(ctx, src, source.Options{})
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	printDiagnostics(env.Stderr, res.Diagnostics)
	if len(res.Skills) == 0 {
		return fmt.Errorf("install: no skill (a folder with a SKILL.md) in %s, searched %d folder levels deep; give a skill folder, a folder of skills or an archive of them (--depth searches deeper)", src.Label, depth)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	refused, installed := 0, 0
	seen := map[string]string{}
	for _, f := range res.Skills {
		where := src.DisplayPath(f.Dir)
		if fromArchive {
			where = src.Label
			if f.Dir != "." {
				where += ": " + f.Dir
			}
		}
		refuse := func(format string, args ...any) {
			refused++
			fmt.Fprintf(env.Stderr, "skillkit: install: %s: %s\n", where, fmt.Sprintf(format, args...))
		}
		// The folder installed is named as the skill's folder; a skill at
		// the root of an archive gets its own name (the validator then
		// checks the name against the folder it will have).
		dirName := path.Base(f.Dir)
		switch {
		case f.Dir == "." && fromArchive:
			dirName = f.Front.Name
		case f.Dir == ".":
			dirName = filepath.Base(src.Path)
		}
		skfs, err := src.SkillFS(f)
		if err != nil {
			refuse("%v", err)
			continue
		}
		if errs := skill.Validate(skfs, dirName); len(errs) > 0 {
			refused++
			fmt.Fprintf(env.Stderr, "Validation failed for %s:\n", where)
			for _, e := range errs {
				fmt.Fprintf(env.Stderr, "  - %s\n", e)
			}
			continue
		}
		if dirName == "" || dirName == "." || dirName == ".." || strings.ContainsAny(dirName, `/\`) {
			refuse("the folder name %q cannot be installed", dirName)
			continue
		}
		if other, ok := seen[dirName]; ok {
			refuse("a skill named %s comes from %s already; install one of them at a time", dirName, other)
			continue
		}
		seen[dirName] = where
		target := filepath.Join(dest, dirName)
		if src.HostPath(f.Dir) == target {
			refuse("this is the installed folder itself")
			continue
		}
		_, statErr := os.Lstat(target)
		exists := statErr == nil
		if exists && !force {
			refuse("%s is installed already at %s; pass --force to replace it", dirName, target)
			continue
		}
		if err := installSkill(ctx, skfs, where, dest, dirName, exists, env.Stderr); err != nil {
			refuse("%v", err)
			continue
		}
		installed++
		verb := "Installed"
		if exists {
			verb = "Replaced"
		}
		fmt.Fprintf(env.Stdout, "%s %s: %s (from %s)\n", verb, dirName, target, where)
	}
	if refused > 0 {
		fmt.Fprintf(env.Stderr, "skillkit: install: %d of %d skills refused, %d installed into %s\n", refused, len(res.Skills), installed, dest)
		return exitError{1}
	}
	return nil
}

// installSkill copies the skill of skfs — the files its manifest lists —
// into a temporary folder in dest and renames it to dest/name, replacing
// the folder there when replace is set.
func installSkill(ctx context.Context, skfs fs.FS, where, dest, name string, replace bool, stderr io.Writer) error {
	m, diags, err := skill.ReadManifest(ctx, skfs, ".", skill.ManifestOptions{Label: where})
	printDiagnostics(stderr, diags)
	if err != nil {
		return err
	}
	if m.Truncated != nil {
		return fmt.Errorf("the skill is over the per-skill limits (%d files, %d bytes) and is not installed in part", skill.DefaultMaxFiles, skill.DefaultMaxBytes)
	}
	tmp, err := os.MkdirTemp(dest, "."+name+".installing-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, file := range m.Files {
		if err := copyListed(skfs, root, file); err != nil {
			return fmt.Errorf("%s: %w", file.Path, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	target := filepath.Join(dest, name)
	if !replace {
		// Rename refuses to replace a folder that is not empty; one made
		// meanwhile is not overwritten.
		if err := os.Rename(tmp, target); err != nil {
			return fmt.Errorf("%s appeared meanwhile or cannot be written: %w", target, err)
		}
		return nil
	}
	old, err := os.MkdirTemp(dest, "."+name+".replaced-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(old)
	moved := filepath.Join(old, name)
	if err := os.Rename(target, moved); err != nil {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Rename(moved, target) // put the old one back
		return err
	}
	return nil
}

// copyListed copies one listed file of a skill into root, opening it by
// its link-free path and checking it is the regular file listed.
func copyListed(skfs fs.FS, root *os.Root, file skill.File) error {
	name := file.Path
	open := file.Path
	if file.Target != "" {
		open = file.Target
	}
	in, err := skfs.Open(open)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := skill.CheckListed(in, file.Size); err != nil {
		return err
	}
	info, err := in.Stat()
	if err != nil {
		return err
	}
	if d := path.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	perm := fs.FileMode(0o644)
	if info.Mode().Perm()&0o111 != 0 {
		perm = 0o755
	}
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, file.Size+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != file.Size {
		err = fmt.Errorf("changed while it was copied (%d bytes, listed with %d)", n, file.Size)
	}
	return err
}
