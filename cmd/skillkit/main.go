// Command skillkit is the Agent Skills tool for skill authors and
// operators: validate skills, list them, render the model's catalog, show
// what the skill tool returns, count tokens, and run an agent turn. Run
// `skillkit help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/skillkit/skillkit/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	stop()
	os.Exit(code)
}
