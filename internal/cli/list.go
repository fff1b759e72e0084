package cli

import (
	"context"
	"fmt"
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
	ShadowedBy     string `json:"shadowed_by,omitempty"`
	Error          string `json:"error,omitempty"`
}

func newList(env *Env) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "list [--json] [--all] [ROOT...]",
		Short: "List the skills found in the roots",
		Long: "list prints the skills that win in the given roots (or the default roots), sorted by name.\n" +
			"--all adds the skills shadowed by a same-name skill of a better rank, with shadowed_by\n" +
			"naming the winner's folder. Discovery diagnostics go to stderr.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			reg, err := openRegistry(ctx, env, args)
			if err != nil {
				return err
			}
			snap := reg.Snapshot()
			var items []listItem
			for _, s := range snap.Summaries() {
				items = append(items, describe(cmd, snap, s, ""))
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
						if m, err := shadowedManifest(ctx, it.Path); err != nil {
							it.Error = err.Error()
						} else {
							it.Files, it.Bytes, it.Docs = len(m.Files), m.Bytes, len(m.Docs())
						}
					}
					items = append(items, it)
				}
			}
			if items == nil {
				items = []listItem{}
			}
			if asJSON {
				return printJSON(env.Stdout, items)
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
	addDepthFlag(cmd, env)
	return cmd
}

// shadowedManifest lists the skill folder dir through the file system of
// source.Dir, which opens beneath the folder without following symbolic
// links and with O_NONBLOCK (links inside the skill are resolved once by
// ReadManifest; the folder's own path may be a link, as discovery allows).
func shadowedManifest(ctx context.Context, dir string) (*skill.Manifest, error) {
	src, err := source.Dir(dir, dir, 0)
	if err != nil {
		return nil, err
	}
	m, _, err := skill.ReadManifest(ctx, src.FS, ".", skill.ManifestOptions{Label: dir})
	return m, err
}

func describe(cmd *cobra.Command, snap *registry.Snapshot, s skill.Summary, shadowedBy string) listItem {
	it := listItem{Name: s.Name, Description: s.Description, Path: s.Path, Source: s.Source, Rank: s.Rank,
		ModelInvocable: s.ModelInvocable, UserInvocable: s.UserInvocable, ShadowedBy: shadowedBy}
	m, diags, err := snap.Manifest(cmd.Context(), s.Name)
	for _, d := range diags {
		fmt.Fprintln(cmd.ErrOrStderr(), d.String())
	}
	if err != nil {
		it.Error = err.Error()
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: error: %v\n", s.Path, err)
		return it
	}
	it.Files, it.Bytes, it.Docs = len(m.Files), m.Bytes, len(m.Docs())
	return it
}
