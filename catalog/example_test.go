package catalog_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/skill"
)

func Example() {
	summaries := []skill.Summary{
		{Name: "pdf", Description: "Fill   PDF forms\nand <extract> text.", ModelInvocable: true},
		{Name: "deploy", Description: "Deploy to production.", ModelInvocable: false}, // user-only
		{Name: "docx", Description: "Edit Word documents.", ModelInvocable: true},
	}
	cat, err := catalog.New(summaries, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cat.Render(catalog.Reminder{}))
	// Output:
	// <system-reminder>
	// A skill is a reusable set of task-specific instructions. The following skills are available in this session:
	//
	// <available_skills>
	// - `docx`: Edit Word documents.
	// - `pdf`: Fill PDF forms and &lt;extract&gt; text.
	// </available_skills>
	//
	// If the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.
	// </system-reminder>
}

func ExampleDescription() {
	d, err := catalog.Description(strings.Repeat("Long   description ", 5), 50)
	fmt.Println(d, err)
	_, err = catalog.Description("x", 2)
	fmt.Println(errors.Is(err, catalog.ErrInvalidMaxLength))
	// Output:
	// Long description Long description Long descript... <nil>
	// true
}

func ExampleRenderSkillResult() {
	text, err := catalog.RenderSkillResult(catalog.SkillResult{
		Name:      "pdf",
		Provider:  "local",
		Resources: &catalog.ResourceBase{Kind: catalog.ResourceDirectory, Path: "/work/.agents/skills/pdf"},
		Content:   "# PDF\nRun scripts/fill.py.",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	fmt.Println(catalog.UnknownSkillError("pdfx"))
	// Output:
	// <skill_content name="pdf">
	// <skill_resources>
	// Base directory for this skill: /work/.agents/skills/pdf
	// Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.
	// </skill_resources>
	//
	// <skill_instructions>
	// # PDF
	// Run scripts/fill.py.
	// </skill_instructions>
	// </skill_content>
	// Error: skill "pdfx" is unknown or no longer available
}

func ExampleCatalog_Fit() {
	var summaries []skill.Summary
	for _, name := range []string{"alpha", "beta", "gamma", "delta"} {
		summaries = append(summaries, skill.Summary{
			Name:           name,
			Description:    strings.Repeat("A skill with a fairly long description of what it does. ", 8),
			ModelInvocable: true,
		})
	}
	cat, err := catalog.New(summaries, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	counter, err := catalog.NewCounter("o200k_base") // create once, reuse
	if err != nil {
		fmt.Println(err)
		return
	}
	fit, err := cat.Fit(catalog.List{}, catalog.Budget{MaxTokens: 70, Counter: counter})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("cap %d, shown %d, omitted %d, within budget: %v\n",
		fit.DescriptionMaxLength, fit.Shown, fit.Omitted, fit.Tokens <= 70)
	fmt.Println(strings.Contains(fit.Text, "not listed here"))
	// Output:
	// cap 64, shown 1, omitted 3, within budget: true
	// true
}

func ExampleCatalog_Digest() {
	a, _ := catalog.New([]skill.Summary{
		{Name: "pdf", Description: "Fill PDF forms.", ModelInvocable: true},
		{Name: "docx", Description: "Edit Word documents.", ModelInvocable: true},
	}, nil)
	b, _ := catalog.New([]skill.Summary{
		{Name: "docx", Description: "Edit   Word documents.", ModelInvocable: true},
		{Name: "pdf", Description: "Fill PDF forms.", ModelInvocable: true},
	}, nil)
	fmt.Println(a.Digest() == b.Digest())
	// Output:
	// true
}
