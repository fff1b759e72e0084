package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/skillkit/skillkit/sandbox"
)

// A container runner over Podman's Docker-compatible API (`podman system
// service`), or Docker's socket. Each workspace gets a container of the
// image, kept for its next commands until the workspace is released.
func ExampleNewContainer() {
	r, err := sandbox.NewContainer(&sandbox.ContainerOptions{
		Socket: "unix:///run/podman/podman.sock", // or DOCKER_HOST, or the defaults
		Image:  "docker.io/library/python:3.13-slim",
	})
	if err != nil {
		log.Fatal(err) // no engine, a tcp:// DOCKER_HOST, or the image is not pulled
	}
	defer r.(io.Closer).Close() // removes every container made

	ws := "/srv/skillkit/workspaces/w1"
	res, err := r.Run(context.Background(), sandbox.Spec{
		Args:      []string{"python3", "-c", "print('hello')"},
		Workspace: ws, // seen inside at sandbox.WorkspacePath(r, ws): /workspace
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", res.Stdout)
	// When the workspace ends, its container goes (the idle TTL and
	// Close catch the rest).
	_ = sandbox.ReleaseWorkspace(r, ws)
}
