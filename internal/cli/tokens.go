package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/catalog"
)

type tokenRow struct {
	Name          string `json:"name"`
	CatalogTokens int    `json:"catalog_tokens"`
	BodyTokens    int    `json:"body_tokens"`
	DocsTokens    int    `json:"docs_tokens"`
	Docs          int    `json:"docs"`
}

type tokenReport struct {
	Encoding string     `json:"encoding"`
	Skills   []tokenRow `json:"skills"`
	Totals   struct {
		// Catalog is the whole rendered catalog (reminder format), with
		// the framing around its lines.
		Catalog int `json:"catalog_tokens"`
		// CatalogLines is the sum of the skills' catalog lines.
		CatalogLines int `json:"catalog_line_tokens"`
		Bodies       int `json:"body_tokens"`
		Docs         int `json:"docs_tokens"`
		// FullInjection is every body and every document.
		FullInjection int `json:"full_injection_tokens"`
	} `json:"totals"`
	// Ratio is full injection divided by the catalog.
	Ratio float64 `json:"full_injection_to_catalog_ratio"`
}

func newTokens(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tokens [--json] [ROOT...]",
		Short: "Count the tokens of catalog lines, bodies and documents",
		Long: "tokens counts, per skill, the tokens of its catalog line, its SKILL.md body and its documents\n" +
			"(o200k_base), the totals, and the ratio of injecting every body and document up front to the\n" +
			"catalog alone — what progressive disclosure saves. Skills hidden from the model have no\n" +
			"catalog line but their bodies and documents are counted.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			reg, err := openRegistry(ctx, env, args)
			if err != nil {
				return err
			}
			counter, err := catalog.NewCounter(catalog.DefaultEncoding)
			if err != nil {
				return err
			}
			snap := reg.Snapshot()
			c, err := catalog.New(snap.Summaries(), nil)
			if err != nil {
				return err
			}
			lines := map[string]string{}
			for _, e := range c.Entries() {
				lines[e.Name] = "- `" + e.Name + "`: " + e.Description
			}
			rep := tokenReport{Encoding: counter.Encoding(), Skills: []tokenRow{}}
			count := func(s string) int {
				n, err := counter.Count(s)
				if err != nil {
					fmt.Fprintf(env.Stderr, "skillkit: counting tokens: %v\n", err)
				}
				return n
			}
			for _, s := range snap.Summaries() {
				row := tokenRow{Name: s.Name}
				if l, ok := lines[s.Name]; ok {
					row.CatalogTokens = count(l)
				}
				body, err := snap.Body(ctx, s.Name)
				if err != nil {
					return err
				}
				row.BodyTokens = count(body)
				// The documents of the skill's listing, whose warnings
				// (a skill over the per-skill limits, say) go to stderr.
				var docs []string
				if m, err := printListing(ctx, env.Stderr, snap, s.Name); err == nil {
					docs = m.Docs()
				}
				for _, d := range docs {
					text, err := snap.DocText(ctx, s.Name, d)
					if err != nil {
						fmt.Fprintf(env.Stderr, "%s: warning: document %s not counted: %v\n", s.Path, d, err)
						continue
					}
					row.DocsTokens += count(text)
					row.Docs++
				}
				rep.Skills = append(rep.Skills, row)
				rep.Totals.CatalogLines += row.CatalogTokens
				rep.Totals.Bodies += row.BodyTokens
				rep.Totals.Docs += row.DocsTokens
			}
			rep.Totals.Catalog = count(c.Render(catalog.Reminder{}))
			rep.Totals.FullInjection = rep.Totals.Bodies + rep.Totals.Docs
			if rep.Totals.Catalog > 0 {
				rep.Ratio = float64(rep.Totals.FullInjection) / float64(rep.Totals.Catalog)
			}
			if asJSON {
				return printJSON(env.Stdout, rep)
			}
			fmt.Fprintf(env.Stdout, "tokens (%s)\n", rep.Encoding)
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "SKILL\tCATALOG LINE\tBODY\tDOCS\t")
			for _, r := range rep.Skills {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", r.Name, r.CatalogTokens, r.BodyTokens, r.DocsTokens)
			}
			fmt.Fprintf(tw, "sum\t%d\t%d\t%d\t\n", rep.Totals.CatalogLines, rep.Totals.Bodies, rep.Totals.Docs)
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "\ncatalog as sent (reminder format, lines and framing): %d tokens\n", rep.Totals.Catalog)
			fmt.Fprintf(env.Stdout, "full injection (every body and document up front): %d tokens", rep.Totals.FullInjection)
			if rep.Totals.Catalog > 0 {
				fmt.Fprintf(env.Stdout, ", %.1f× the catalog as sent", rep.Ratio)
			}
			fmt.Fprintln(env.Stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	addDepthFlag(cmd, env)
	addLimitFlags(cmd, env, false)
	return cmd
}
