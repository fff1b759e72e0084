package skillkit_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/source"
)

// Skills in a model loop: the first request carries the catalog, the
// model answers with a skill call, and the next request carries the
// skill's instructions in that call's result.
func Example() {
	ctx := context.Background()
	files := fstest.MapFS{"greet/SKILL.md": {Data: []byte("---\nname: greet\ndescription: Greets people.\n---\nSay hello warmly.\n")}}
	kit, err := skillkit.New(ctx, &skillkit.Options{Sources: []source.Source{source.FS(files, "bundled", 0)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kit.Close()
	conv, _ := kit.Open(ctx, "", "assistant")
	_, _ = conv.User(ctx, "Say hi to Ann.")

	req, _ := conv.Request(ctx) // send req.Messages and req.Tools to the model
	fmt.Println(len(req.Messages), "messages,", len(req.Tools), "tools")

	_, err = conv.Respond(ctx, skillkit.Assistant{Calls: []skillkit.ToolCall{{ID: "call_1", Name: "skill", Arguments: `{"name":"greet"}`}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	req, _ = conv.Request(ctx)
	last := req.Messages[len(req.Messages)-1]
	fmt.Println(last.Role, last.ToolCallID)
	fmt.Println(last.Content)
	// Output:
	// 2 messages, 5 tools
	// tool call_1
	// <skill_content name="greet">
	// <skill_resources>
	// Resources for this skill are managed by provider "bundled".
	// Load referenced resources only as needed.
	// </skill_resources>
	//
	// <skill_instructions>
	// Say hello warmly.
	// </skill_instructions>
	// </skill_content>
}
