// Command activation shows tool activation on skill load: the file tools
// over a folder are registered as a candidate tool set that loading the
// api-style-guide skill brings into the agent's requests. The scripted
// model's first request has no notes_* tools; it loads the skill, and the
// next request offers them, so it reads the user's draft with
// notes_read_file. A small wrapper around the model prints the tools of
// each request it receives. No key and no network are needed. From the
// repository root:
//
//	go run ./examples/activation
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/tools/filetools"
)

func main() {
	ctx := context.Background()
	dir := must(os.MkdirTemp("", "activation-example"))
	defer os.RemoveAll(dir)
	draft := "POST /invoices/{id}/send\nWhen the invoice is locked: 200 {\"ok\": false, \"error\": \"locked\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "draft.md"), []byte(draft), 0o644); err != nil {
		log.Fatal(err)
	}

	// Read-only: the model may read the user's notes, never change them.
	notes := must(filetools.New(&filetools.Options{BaseDir: dir, Name: "notes", ReadOnly: true}))
	kit := must(skillkit.New(ctx, &skillkit.Options{
		Roots: []string{"examples/skills"},
		Agent: skillkit.AgentOptions{Activation: &skillkit.Activation{
			Sets:  []tools.ToolSet{notes},
			Rules: []skillkit.ActivationRule{{Skill: "api-style-guide", Sets: []string{"notes"}}},
		}},
	}))
	defer kit.Close()
	m := &printer{Model: must(scripted.New(script, nil))}
	a := must(agent.New(kit, "assistant", m, nil))

	for ev, err := range a.Run(ctx, "", "Review the error responses in draft.md.") {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case agent.KindToolResult:
			fmt.Printf("  %s %s →\n%s\n", ev.Call.Name, ev.Call.Arguments, indent(ev.Result.Text))
		case agent.KindAnswer:
			fmt.Printf("answer: %s\n", ev.Text)
		}
	}
}

// script is what the scripted model answers. Its expectations fail the
// run unless the notes tools are missing before the load and offered
// after it.
var script = &scripted.Script{Steps: []scripted.Step{
	{
		Expect: &scripted.Expect{ToolsExclude: []string{"notes_read_file"}},
		Calls:  []scripted.Call{{ID: "call_1", Name: "skill_load", Arguments: `{"skill":"api-style-guide","docs":["references/errors.md"]}`}},
	},
	{
		Expect: &scripted.Expect{ToolsInclude: []string{"notes_read_file"}},
		Calls:  []scripted.Call{{ID: "call_2", Name: "notes_read_file", Arguments: `{"path":"draft.md"}`}},
	},
	{Text: "A locked invoice should be 409 with an application/problem+json body, not 200."},
}}

// printer is a model.Model that prints the tools each request offers
// before passing it on. The agent asks for whole answers (Generate)
// unless told to stream.
type printer struct {
	model.Model
	n int
}

func (p *printer) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	p.n++
	fmt.Printf("request %d tools:", p.n)
	for _, t := range req.Tools {
		fmt.Printf(" %s", t.Function.Name)
	}
	fmt.Println()
	return p.Model.Generate(ctx, req)
}

// indent indents each line of s, so a result stands apart from the lines
// around it.
func indent(s string) string {
	return "    | " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    | ")
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
