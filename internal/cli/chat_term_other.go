//go:build !linux

package cli

import "io"

// openTerminalInput returns nil: the line editor needs Linux's terminal
// interface, so elsewhere chat reads plain lines, as from a pipe.
func openTerminalInput(io.Reader, func(), func() (commands, skills []string)) (lineInput, error) {
	return nil, nil
}
