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
	res, err := tools.Skill().Call(ctx, tools.Call{Args: json.RawMessage(`{"name":"pdf"}`), Skills: reg.Snapshot()})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	fmt.Printf("error: %v, effects: %+v\n", res.IsError, res.Effects)

	res, _ = tools.Skill().Call(ctx, tools.Call{Args: json.RawMessage(`{"name":"PDF"}`), Skills: reg.Snapshot()})
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
	// error: false, effects: [{Kind:load Skill:pdf DocsMode:keep Docs:[] AllDocs:false Inline:true}]
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

// New builds a tool from its argument type: the schema is derived from the
// struct, and arguments that do not fit it are an error result the model
// sees before the handler runs.
func ExampleNew() {
	type weatherArgs struct {
		City string `json:"city" jsonschema:"The city, e.g. Paris."`
		Days int    `json:"days,omitempty" jsonschema:"How many days ahead (default 1)."`
	}
	weather := tools.New("weather", "Forecast for a city.",
		func(ctx context.Context, c tools.Call, in weatherArgs) (tools.Result, error) {
			return tools.Result{Text: fmt.Sprintf("%s: sunny for %d day(s)", in.City, max(in.Days, 1))}, nil
		})
	ctx := context.Background()
	for _, args := range []string{`{"city":"Paris"}`, `{"city":"Paris","days":"two"}`, `{"days":2}`} {
		res, err := weather.Call(ctx, tools.Call{Args: json.RawMessage(args)})
		fmt.Println(res.IsError, res.Text, err)
	}
	b, _ := json.Marshal(weather.InputSchema)
	fmt.Println(string(b))
	// Output:
	// false Paris: sunny for 1 day(s) <nil>
	// true Error: invalid arguments to weather: validating root: validating /properties/days: type: two has type "string", want "integer"; send one JSON object that matches the tool's schema <nil>
	// true Error: invalid arguments to weather: validating root: required: missing properties: ["city"]; send one JSON object that matches the tool's schema <nil>
	// {"type":"object","properties":{"city":{"type":"string","description":"The city, e.g. Paris."},"days":{"type":"integer","description":"How many days ahead (default 1)."}},"required":["city"],"additionalProperties":false}
}
