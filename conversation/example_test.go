package conversation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
)

// Record a model's turn: a user message, the model's answer with a
// skill_load call, then the next request, whose tool result carries the
// loaded instructions.
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "skills")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, "greet"), 0o755)
	_ = os.WriteFile(filepath.Join(root, "greet", "SKILL.md"), []byte("---\nname: greet\ndescription: Greets.\n---\nSay hello.\n"), 0o644)
	reg, _ := registry.New(ctx, []source.Source{source.FS(os.DirFS(root), "project", 0)}, nil)

	store := session.NewMemoryStore(nil)
	s, _ := store.Create(ctx, "", nil)
	c, err := conversation.Open(ctx, store, s.ID, "main", &conversation.Options{
		Skills: func(context.Context) *registry.Snapshot { return reg.Snapshot() },
		Tools:  tools.Static{tools.Load()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	_, _ = c.User(ctx, "hi")
	// The model answers with text and a call, with the provider's ID.
	step, err := c.Respond(ctx, conversation.Assistant{Text: "Loading the skill.",
		Calls: []session.ToolCall{{ID: "call_abc", Name: "skill_load", Arguments: `{"skill":"greet"}`}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(step.Results[0].Text, step.Events[1].ToolCallID)
	req, _ := c.Request(ctx)
	fmt.Printf("%q\n", req.Messages[len(req.Messages)-1].Content)
	// Output:
	// loaded: greet call_abc
	// "loaded: greet\n\n[Loaded] greet\n\nSay hello."
}
