package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/tools"
)

func newCatalog(env *Env) *cobra.Command {
	var format string
	var maxDesc, budget int
	cmd := &cobra.Command{
		Use:   "catalog [--format reminder|list] [--max-description N] [--budget-tokens N] [ROOT...]",
		Short: "Print the skill catalog the model sees",
		Long: "catalog prints exactly the catalog text for the model-invocable skills, followed by a newline\n" +
			"(nothing at all when there is no model-invocable skill). --format reminder is the\n" +
			"<system-reminder> block of the skill tool; --format list is an \"Available skills:\" list.\n" +
			"--budget-tokens shortens descriptions, then leaves skills out (with a line saying how many\n" +
			"and how to reach them) until the text fits; tokens are counted with o200k_base.",
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := rendererFor(format)
			if err != nil {
				return err
			}
			if maxDesc < catalog.MinDescriptionMaxLength {
				return fmt.Errorf("--max-description is %d; it must be an integer of at least %d", maxDesc, catalog.MinDescriptionMaxLength)
			}
			if budget < 0 {
				return fmt.Errorf("--budget-tokens is %d; use 0 for no budget or a positive token count", budget)
			}
			reg, err := openRegistry(cmd.Context(), env, args)
			if err != nil {
				return err
			}
			c, err := catalog.New(reg.Snapshot().Summaries(), &catalog.Options{DescriptionMaxLength: maxDesc})
			if err != nil {
				return err
			}
			text := c.Render(r)
			if budget > 0 {
				f, err := c.Fit(r, catalog.Budget{MaxTokens: budget})
				if err != nil {
					var be *catalog.BudgetError
					if errors.As(err, &be) {
						return fmt.Errorf("--budget-tokens %d is too small: the catalog with every skill left out and its note takes %d tokens (%s); pass --budget-tokens %d or more", budget, be.Need, be.Encoding, be.Need)
					}
					return fmt.Errorf("--budget-tokens %d: %w", budget, err)
				}
				text = f.Text
				if f.Omitted > 0 || f.DescriptionMaxLength < maxDesc {
					fmt.Fprintf(env.Stderr, "skillkit: catalog fitted to %d tokens: descriptions capped at %d, %d skills shown, %d left out\n", budget, f.DescriptionMaxLength, f.Shown, f.Omitted)
				}
			}
			writeText(env.Stdout, text)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "reminder", "catalog format: reminder or list")
	cmd.Flags().IntVar(&maxDesc, "max-description", catalog.DefaultDescriptionMaxLength, "cap on each description, in UTF-16 code units (at least 3)")
	cmd.Flags().IntVar(&budget, "budget-tokens", 0, "fit the catalog within this many tokens (0: no budget)")
	addFromMCPFlag(cmd, &env.mcp)
	addDepthFlag(cmd, env)
	addLimitFlags(cmd, env, false)
	return cmd
}

func rendererFor(format string) (catalog.Renderer, error) {
	switch format {
	case "reminder":
		return catalog.Reminder{}, nil
	case "list":
		return catalog.List{}, nil
	}
	return nil, fmt.Errorf("--format %q is not a catalog format; use reminder or list", format)
}

// writeText prints text and, when it is not empty and lacks one, a final
// newline.
func writeText(w io.Writer, text string) {
	if text == "" {
		return
	}
	io.WriteString(w, text)
	if !strings.HasSuffix(text, "\n") {
		io.WriteString(w, "\n")
	}
}

func newShow(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show NAME [ROOT...]",
		Short: "Print exactly what the skill tool returns for NAME",
		Long: "show prints the result the model gets from the skill tool for NAME: the skill's\n" +
			"instructions in their <skill_content> wrapper, or the tool's error text (exit status 1).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := openRegistry(cmd.Context(), env, args[1:])
			if err != nil {
				return err
			}
			text, err := tools.RenderSkill(cmd.Context(), reg.Snapshot(), args[0])
			writeText(env.Stdout, text)
			if err != nil {
				return exitError{1}
			}
			return nil
		},
	}
	addFromMCPFlag(cmd, &env.mcp)
	addDepthFlag(cmd, env)
	addLimitFlags(cmd, env, false)
	return cmd
}
