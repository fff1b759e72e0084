package sandbox

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// discardLogger keeps test output quiet.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fmtSscan reads "forked N" output.
func fmtSscan(s string, n *int) (int, error) {
	return fmt.Sscanf(strings.TrimSpace(s), "forked %d", n)
}
