package workspace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/skillkit/skillkit/workspace"
)

func Example() {
	root, err := os.MkdirTemp("", "workspaces")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	ctx := context.Background()

	m, err := workspace.New(&workspace.Options{Root: root})
	if err != nil {
		panic(err)
	}
	defer m.Close() // unmounts the workspaces' volumes (made when running as root)
	ws, err := m.Open(ctx, "session-1")
	if err != nil {
		panic(err)
	}
	unlock, err := ws.Lock(ctx)
	if err != nil {
		panic(err)
	}
	defer unlock()

	// Any fs.FS works as a source: os.DirFS, embed.FS, fstest.MapFS.
	skill := fstest.MapFS{
		"SKILL.md":         {Data: []byte("---\nname: hello\n---\nRun scripts/hello.sh\n")},
		"scripts/hello.sh": {Data: []byte("echo hello > \"$OUTPUT_DIR/hello.txt\"\n"), Mode: 0o755},
		".git/config":      {Data: []byte("not copied")},
	}
	st, err := ws.Stage(ctx, "hello", skill)
	if err != nil {
		panic(err)
	}
	again, err := ws.Stage(ctx, "hello", skill)
	if err != nil {
		panic(err)
	}
	fmt.Println("staged:", st.Files, "files, copied:", st.Copied, "then", again.Copied)

	run, err := ws.NewRun(ctx, "hello")
	if err != nil {
		panic(err)
	}
	fmt.Println("SKILL_NAME =", run.Env["SKILL_NAME"])
	fmt.Println("RUN_DIR under runs/:", filepath.Dir(run.Env["RUN_DIR"]) == ws.RunsDir())

	// Here the sandbox would run scripts/hello.sh; write its output directly.
	if err := os.WriteFile(filepath.Join(run.Env["OUTPUT_DIR"], "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		panic(err)
	}
	out, err := ws.Collect(ctx, []string{"out/**"}, nil)
	if err != nil {
		panic(err)
	}
	for _, f := range out.Files {
		fmt.Printf("%s %d %s %q\n", f.Path, f.Size, f.MIME, f.Content)
	}
	// Output:
	// staged: 2 files, copied: true then false
	// SKILL_NAME = hello
	// RUN_DIR under runs/: true
	// out/hello.txt 6 text/plain; charset=utf-8 "hello\n"
}
