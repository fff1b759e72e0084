package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client over r and w (a host that starts
// `skillkit serve` talks over its stdin and stdout), one JSON-RPC message
// a line, until the client closes r or ctx ends; the client's session
// ends with it. w receives protocol messages only.
func (s *Server) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	return s.ServeTransport(ctx, &sdk.IOTransport{Reader: r, Writer: w})
}

// ServeTransport serves one client over any MCP transport (an in-memory
// pair in tests, a custom pipe) until it closes or ctx ends; the client's
// session ends with it.
func (s *Server) ServeTransport(ctx context.Context, t sdk.Transport) error {
	err := s.stateful.sdk.Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("mcp: serving a client: %w", err)
}
