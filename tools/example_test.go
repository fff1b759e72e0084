package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing/fstest"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
)

// A skill tool call on an in-memory registry: the result is the text the
// model sees and the load-state change the session records.
func ExampleSkill() {
	fsys := fstest.MapFS{
		"pdf/SKILL.md":           {Data: []byte("---\nname: pdf\ndescription: Extract text from PDF files.\n---\n\nRun scripts/extract.py FILE.\n")},
		"pdf/scripts/extract.py": {Data: []byte("print('text')\n")},
	}
	ctx := context.Background()
	reg, err := registry.New(ctx, []source.Source{source.FS(fsys, "bundled", 0)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res := tools.Skill().Call(ctx, tools.Call{Args: json.RawMessage(`{"name":"pdf"}`), Skills: reg.Snapshot()})
	fmt.Println(res.Text)
	fmt.Printf("error: %v, effects: %+v\n", res.IsError, res.Effects)

	res = tools.Skill().Call(ctx, tools.Call{Args: json.RawMessage(`{"name":"PDF"}`), Skills: reg.Snapshot()})
	fmt.Println(res.Text)
	// Output:
	// <skill_content name="pdf">
	// <skill_resources>
	// Resources for this skill are managed by provider "bundled".
	// Load referenced resources only as needed.
	// </skill_resources>
	//
	// <skill_instructions>
	// Run scripts/extract.py FILE.
	// </skill_instructions>
	// </skill_content>
	// error: false, effects: [{Kind:load Skill:pdf DocsMode:keep Docs:[] AllDocs:false}]
	// Error: invalid skill name "PDF"
}

// Select builds an agent's tool list from configuration; an empty list
// means the default.
func ExampleSelect() {
	list, err := tools.Select(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range list {
		fmt.Println(t.Name)
	}
	_, err = tools.Select([]string{"skill", "skill_exec"})
	fmt.Println(err)
	// Output:
	// skill
	// skill_load
	// skill_select_docs
	// skill_list_docs
	// skill_read
	// tools: unknown tool "skill_exec"; available: skill, skill_list_docs, skill_load, skill_read, skill_select_docs
}
