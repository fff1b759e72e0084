package watch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/watch"
)

// A skill added while the watcher runs joins the registry a debounce
// after it was written.
func Example() {
	root, _ := os.MkdirTemp("", "skills")
	defer os.RemoveAll(root)
	src, _ := source.Dir(root, "skills", 0)
	reg, _ := registry.New(context.Background(), []source.Source{src}, nil)

	changed := make(chan *registry.Snapshot, 1)
	w, err := watch.Start(context.Background(), reg, &watch.Options{
		OnChange: func(_ context.Context, s *registry.Snapshot) { changed <- s },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	dir := filepath.Join(root, "greet")
	_ = os.Mkdir(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: greet\ndescription: Greets people.\n---\nSay hello.\n"), 0o644)

	snap := <-changed
	for _, s := range snap.Summaries() {
		fmt.Println(s.Name+":", s.Description)
	}
	// Output: greet: Greets people.
}
