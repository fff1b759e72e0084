package filetools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/tools/filetools"
)

// The file tools over a folder: the set is expanded into the tools the
// model sees, named "<set>_<tool>", and a call runs one of them.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "filetools-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	set, err := filetools.New(&filetools.Options{BaseDir: dir, ReadOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	list, err := set.Expand()
	if err != nil {
		fmt.Println(err)
		return
	}
	byName := map[string]tools.Tool{}
	for _, t := range list {
		fmt.Println(t.Name)
		byName[t.Name] = t
	}

	ctx := context.Background()
	res, err := byName["file_read_file"].Call(ctx, tools.Call{Args: json.RawMessage(`{"path":"notes.txt","max_lines":2}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Text, "\n")

	// A path that leaves the folder is the model's mistake: an error
	// result it can act on, not a Go error.
	res, _ = byName["file_read_file"].Call(ctx, tools.Call{Args: json.RawMessage(`{"path":"../secret"}`)})
	fmt.Println(res.IsError, res.Text)
	// Output:
	// file_read_file
	// file_list_files
	// file_glob
	// file_grep
	// one
	// two
	// [lines 1-2 of 3; 1 more: read on with offset_line 3]
	// true Error: path "../secret" leads out of the folder with ".."; the tools reach only files inside it
}
