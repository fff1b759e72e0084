// Command skillkit is the Agent Skills tool for skill authors and
// operators: validate skills, list them, render the model's catalog, show
// what the skill tool returns, count tokens, and run an agent turn or a
// chat. Run `skillkit help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/skillkit/skillkit/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	// Ctrl-C goes to the command rather than ending the context: a chat
	// ends the answer in progress and goes on; other commands stop.
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	code := cli.Run(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Interrupt: interrupt})
	stop()
	os.Exit(code)
}
