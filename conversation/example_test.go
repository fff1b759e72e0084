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
)

// Drive a conversation by hand: a user message, a skill_load call, then
// the next request, whose tool result carries the loaded instructions.
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "skills")
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, "greet"), 0o755)
	_ = os.WriteFile(filepath.Join(root, "greet", "SKILL.md"), []byte("---\nname: greet\ndescription: Greets.\n---\nSay hello.\n"), 0o644)
	reg, _ := registry.New(ctx, []source.Source{source.FS(os.DirFS(root), "project", 0)}, nil)

	store := session.NewMemoryStore(nil)
	cfg, _ := conversation.Config{Tools: []string{"skill_load"}}.Normalize()
	s, _ := store.Create(ctx, "", cfg.Meta())
	c, _ := conversation.Open(ctx, store, s.ID, "main", reg.Snapshot())

	_, _ = c.User(ctx, "hi")
	res, _ := c.Call(ctx, "skill_load", []byte(`{"skill":"greet"}`))
	fmt.Println(res.Text)
	req, _ := c.Request(ctx)
	fmt.Printf("%q\n", req.Messages[len(req.Messages)-1].Content)
	// Output:
	// loaded: greet
	// "loaded: greet\n\n[Loaded] greet\n\nSay hello."
}
