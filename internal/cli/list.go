package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// listItem is one object of `skillkit list --json`.
type listItem struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	Path           string `json:"path"`
	Source         string `json:"source"`
	Rank           int    `json:"rank"`
	ModelInvocable bool   `json:"model_invocable"`
	UserInvocable  bool   `json:"user_invocable"`
	Files          int    `json:"files"`
	Bytes          int64  `json:"bytes"`
	Docs           int    `json:"docs"`
	// FilesTruncated is set when the skill holds more files or bytes than
	// the per-skill limits allow: files, bytes and docs count the files
	// that fit, the ones every command reads and stages.
	FilesTruncated bool   `json:"files_truncated,omitempty"`
	ShadowedBy     string `json:"shadowed_by,omitempty"`
	Error          string `json:"error,omitempty"`
}

// listGCPercent is the garbage collector's target while list runs,
// unless GOGC says otherwise. list keeps all it reads — the snapshot,
// every skill's files — until it prints, so the default target (collect
// whenever the heap doubles) collects a heap that is live to the end,
// again and again: eight times, a sixth of a `list --json` of ten
// thousand skills. At 400 that run collects twice, for a smaller peak
// than before (the output is no longer built whole). Commands whose heap
// is mostly garbage (tokens) keep the default.
const listGCPercent = 400

func newList(env *Env) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "list [--json] [--all] [ROOT...]",
		Short: "List the skills found in the roots",
		Long: "list prints the skills that win in the given roots (or the default roots), sorted by name.\n" +
			"--all adds the skills shadowed by a same-name skill of a better rank, with shadowed_by\n" +
			"naming the winner's folder. Discovery diagnostics go to stderr. A skill holding more files\n" +
			"or bytes than --max-files and --max-bytes allow is listed with the files that fit (SKILL.md\n" +
			"first), the ones every command reads and stages, flagged truncated (files_truncated in\n" +
			"JSON), with one warning saying how much the folder holds.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if env.Getenv("GOGC") == "" {
				defer debug.SetGCPercent(debug.SetGCPercent(listGCPercent))
			}
			env.listFiles = true // every skill's files are listed below
			reg, err := openRegistry(ctx, env, args)
			if err != nil {
				return err
			}
			snap := reg.Snapshot()
			// Every skill's files are listed on the registry's workers
			// first; describe then reads what they pinned.
			if err := snap.ListAll(ctx); err != nil {
				return err
			}
			// The listings are pinned: describing is work for the CPU
			// alone, done in chunks in parallel. What each chunk's
			// listings reported is printed after, in order.
			sums := snap.Summaries()
			items := make([]listItem, len(sums))
			for _, notes := range inChunks(len(sums), func(lo, hi int, notes *bytes.Buffer) {
				for i := lo; i < hi; i++ {
					items[i] = describe(ctx, notes, snap, sums[i])
				}
			}) {
				if _, err := env.Stderr.Write(notes.Bytes()); err != nil {
					return err
				}
			}
			if all {
				for _, sh := range snap.Shadowed() {
					it := listItem{Name: sh.Skill.Name, Description: sh.Skill.Description, Path: sh.Skill.Path,
						Source: sh.Skill.Source, Rank: sh.Skill.Rank, ModelInvocable: sh.Skill.ModelInvocable,
						UserInvocable: sh.Skill.UserInvocable, ShadowedBy: sh.By.Path}
					if it.Path != "" {
						// The registry serves only winners; count the loser's
						// files straight from its folder, read as the
						// registry reads it: without following links.
						if m, err := shadowedManifest(ctx, env, it.Path); err != nil {
							it.Error = err.Error()
						} else {
							it.Files, it.Bytes, it.Docs = len(m.Files), m.Bytes, len(m.Docs())
							it.FilesTruncated = m.Truncated != nil
						}
					}
					items = append(items, it)
				}
			}
			if asJSON {
				return writeListJSON(env.Stdout, items)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tFILES\tFLAGS\tPATH")
			for _, it := range items {
				flags := ""
				if !it.ModelInvocable {
					flags += "user-only "
				}
				if !it.UserInvocable {
					flags += "model-only "
				}
				if it.ShadowedBy != "" {
					flags += "shadowed "
				}
				if it.FilesTruncated {
					flags += "truncated "
				}
				if flags == "" {
					flags = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", it.Name, it.Source, it.Files, flags, it.Path)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().BoolVar(&all, "all", false, "also list shadowed skills")
	addFromMCPFlag(cmd, &env.mcp)
	addDepthFlag(cmd, env)
	addLimitFlags(cmd, env, false)
	return cmd
}

// shadowedManifest lists the skill folder dir through the file system of
// source.Dir, which opens beneath the folder without following symbolic
// links and with O_NONBLOCK (links inside the skill are resolved once by
// ReadManifest; the folder's own path may be a link, as discovery allows).
//
// Its warnings are not printed: a shadowed skill is not used, and its
// files count as the registry would count them (truncated at the same
// limits), which files_truncated tells.
func shadowedManifest(ctx context.Context, env *Env, dir string) (*skill.Manifest, error) {
	opts, err := env.registryOptions()
	if err != nil {
		return nil, err
	}
	src, err := source.Dir(dir, dir, 0)
	if err != nil {
		return nil, err
	}
	m, _, err := skill.ReadManifest(ctx, src.FS, ".", skill.ManifestOptions{Limits: opts.Limits, Label: dir})
	return m, err
}

// describe is the list item of the visible skill s, and prints what
// listing its files reported to w (printListing).
func describe(ctx context.Context, w io.Writer, snap *registry.Snapshot, s skill.Summary) listItem {
	it := listItem{Name: s.Name, Description: s.Description, Path: s.Path, Source: s.Source, Rank: s.Rank,
		ModelInvocable: s.ModelInvocable, UserInvocable: s.UserInvocable}
	m, err := printListing(ctx, w, snap, s.Name)
	if err != nil {
		it.Error = err.Error()
		return it
	}
	it.Files, it.Bytes, it.Docs = len(m.Files), m.Bytes, len(m.Docs())
	it.FilesTruncated = m.Truncated != nil
	return it
}

// inChunks calls fn on consecutive chunks [lo, hi) of 0..n-1, as many in
// parallel as there are processors (one chunk when n is small), each
// with a buffer of its own, and returns the buffers in chunk order.
func inChunks(n int, fn func(lo, hi int, buf *bytes.Buffer)) []*bytes.Buffer {
	k := max(1, min(runtime.GOMAXPROCS(0), n/256))
	bufs := make([]*bytes.Buffer, k)
	var wg sync.WaitGroup
	for c := range k {
		bufs[c] = new(bytes.Buffer)
		wg.Go(func() { fn(c*n/k, (c+1)*n/k, bufs[c]) })
	}
	wg.Wait()
	return bufs
}

// printListing lists the files of the skill name and prints what the
// listing reported to w, once: its warnings (among them, for a skill over
// the per-skill limits, the one that says what was left out and which
// flag raises the limit) and its error. It returns the manifest or that
// error.
func printListing(ctx context.Context, w io.Writer, snap *registry.Snapshot, name string) (*skill.Manifest, error) {
	m, diags, err := snap.Manifest(ctx, name)
	printDiagnostics(w, diags)
	if err != nil {
		fmt.Fprintf(w, "skillkit: error: skill %s: %v\n", name, err)
		return nil, err
	}
	return m, nil
}
