package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/source/mcpsource"
)

// fromMCPTokenEnv is the variable holding the bearer token sent to the
// --from-mcp servers (a flag would show it to every user of the machine).
const fromMCPTokenEnv = "SKILLKIT_FROM_MCP_TOKEN"

// fromMCP is the --from-mcp flag of a command: MCP servers whose skills
// (the skills extension) join the roots', ranked after them.
type fromMCP struct {
	urls    []string
	remotes []*mcpsource.Remote
}

// addFromMCPFlag gives cmd --from-mcp URL (repeatable).
func addFromMCPFlag(cmd *cobra.Command, f *fromMCP) {
	cmd.Flags().StringArrayVar(&f.urls, "from-mcp", nil, "also take the skills an MCP server lists (skills extension) at URL, read lazily and verified (repeatable; bearer token from $"+fromMCPTokenEnv+")")
}

// sources connects to every server and returns their sources, ranked from
// rank on. The servers stay connected until close.
func (f *fromMCP) sources(ctx context.Context, env *Env, rank int) ([]source.Source, error) {
	var client *http.Client
	if tok := env.Getenv(fromMCPTokenEnv); tok != "" {
		client = &http.Client{Transport: bearerTransport{token: tok, next: http.DefaultTransport}}
	}
	var out []source.Source
	for i, u := range f.urls {
		r, err := mcpsource.New(ctx, u, &mcpsource.Options{Rank: rank + i, HTTPClient: client})
		if err != nil {
			f.close()
			return nil, fmt.Errorf("--from-mcp: %w", err)
		}
		f.remotes = append(f.remotes, r)
		for _, s := range r.Skipped() {
			fmt.Fprintf(env.Stderr, "skillkit: warning: %s: skill %s left out: %s\n", r.Label(), s.URI, s.Reason)
		}
		out = append(out, r.Source())
	}
	return out, nil
}

// close disconnects from the servers.
func (f *fromMCP) close() {
	for _, r := range f.remotes {
		_ = r.Close()
	}
	f.remotes = nil
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
