package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
	"github.com/skillkit/skillkit/source"
)

// sessionFlags are the flags every session subcommand takes.
type sessionFlags struct {
	store string
	agent string
}

func defaultStorePath(env *Env) string {
	if d := env.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "skillkit", "sessions.db")
	}
	if h := env.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "skillkit", "sessions.db")
	}
	return filepath.Join(sharedStoreDir(), "sessions.db")
}

// sharedStoreDir is the store's directory when neither XDG_STATE_HOME nor
// HOME is set: in the temporary directory, which other users can write,
// so it is named for the user and openStore checks it is theirs.
func sharedStoreDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("skillkit-%d", os.Geteuid()))
}

func newSession(env *Env) *cobra.Command {
	f := &sessionFlags{}
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Drive a durable session by hand: user messages, tool calls, the next prompt",
		Long: "session records a conversation's events in a SQLite store and shows the exact next model\n" +
			"request, with skills loaded by tool calls placed where the session's placement says.\n" +
			"Every subcommand takes --store (default $XDG_STATE_HOME/skillkit/sessions.db, else\n" +
			"~/.local/state/skillkit/sessions.db) and --agent (default \"default\").",
		// The agent name is checked before a session is created or opened,
		// so a bad --agent leaves no session behind.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := conversation.CheckAgent(f.agent); err != nil {
				return fmt.Errorf("--agent: %w", err)
			}
			return nil
		},
	}
	cmd.PersistentFlags().StringVar(&f.store, "store", defaultStorePath(env), "session store file (SQLite)")
	cmd.PersistentFlags().StringVar(&f.agent, "agent", defaultAgent, "agent name; each agent has its own loaded skills")
	addLimitFlags(cmd, env, true)
	cmd.AddCommand(sessionNew(env, f), sessionUser(env, f), sessionCall(env, f), sessionPrompt(env, f),
		sessionShow(env, f), sessionList(env, f), sessionRemove(env, f))
	return cmd
}

func openStore(ctx context.Context, f *sessionFlags) (*sqlitestore.Store, error) {
	dir := filepath.Dir(f.store)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--store %s: %w", f.store, err)
	}
	if dir == sharedStoreDir() {
		// Another user could have made it first, to read the sessions.
		if err := checkPrivateDir(dir); err != nil {
			return nil, fmt.Errorf("--store %s: %w; remove it, or set HOME or XDG_STATE_HOME, or pass --store", f.store, err)
		}
	}
	return sqlitestore.Open(ctx, f.store, nil)
}

// defaultAgent is the agent the session commands address without --agent,
// and the one `skillkit run` runs, so each sees what the other recorded.
const defaultAgent = "default"

// sessionMetaKey is the session metadata key holding the settings
// `session new` chose, so that every later command uses them.
const sessionMetaKey = "skillkit.conversation"

// sessionConfig is what `session new` stores in the session's metadata.
// The JSON names are those of earlier releases, whose sessions still open.
type sessionConfig struct {
	// Roots are the skill roots, as absolute paths, resolved when the
	// session was made; empty means no skills.
	Roots     []string               `json:"roots,omitempty"`
	Lifetime  loadstate.Lifetime     `json:"mode"`
	Placement assembly.Placement     `json:"placement"`
	MaxLoaded int                    `json:"max_loaded"`
	System    string                 `json:"system,omitempty"`
	Catalog   assembly.CatalogFormat `json:"catalog_format"`
}

func (c sessionConfig) meta() map[string]string {
	b, _ := json.Marshal(c) // the enums were checked when parsed
	return map[string]string{sessionMetaKey: string(b)}
}

// configOf reads the settings of session s.
func configOf(s *session.Session) (sessionConfig, error) {
	raw, ok := s.Meta[sessionMetaKey]
	if !ok {
		return sessionConfig{}, fmt.Errorf("session %s has no %s metadata; it was not made by `skillkit session new` or `skillkit run`", s.ID, sessionMetaKey)
	}
	var c sessionConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return sessionConfig{}, fmt.Errorf("session %s: metadata %s: %w", s.ID, sessionMetaKey, err)
	}
	if c.MaxLoaded < 0 {
		return sessionConfig{}, fmt.Errorf("session %s: metadata %s: max_loaded is %d", s.ID, sessionMetaKey, c.MaxLoaded)
	}
	return c, nil
}

// openConversation opens the session's store, registry and tools.
func openConversation(ctx context.Context, env *Env, f *sessionFlags, id string) (*conversation.Conversation, func(), error) {
	st, err := openStore(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	s, err := st.Get(ctx, id)
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("%w (list the sessions with `skillkit session ls`)", err)
	}
	cfg, err := configOf(s)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	reg, err := registryFor(ctx, env, cfg.Roots)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	c, err := conversation.Open(ctx, st, id, f.agent, cfg.options(reg))
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return c, func() { st.Close() }, nil
}

// options are the conversation options of the session's settings.
func (c sessionConfig) options(reg *registry.Registry) *conversation.Options {
	return &conversation.Options{
		Skills:    func(context.Context) *registry.Snapshot { return reg.Snapshot() },
		System:    c.System,
		Lifetime:  c.Lifetime,
		Placement: c.Placement,
		MaxLoaded: c.MaxLoaded,
		Catalog:   assembly.CatalogOptions{Format: c.Catalog},
	}
}

// agentOptions are the kit's agent options of the session's settings:
// what options gives a conversation, for a kit that opens it.
func (c sessionConfig) agentOptions() skillkit.AgentOptions {
	return skillkit.AgentOptions{
		System:    c.System,
		Lifetime:  c.Lifetime,
		Placement: c.Placement,
		MaxLoaded: c.MaxLoaded,
		Catalog:   assembly.CatalogOptions{Format: c.Catalog},
	}
}

// registryFor opens the registry over a session's stored roots; roots
// that have disappeared are reported and skipped.
func registryFor(ctx context.Context, env *Env, roots []string) (*registry.Registry, error) {
	opts, err := env.registryOptions()
	if err != nil {
		return nil, err
	}
	return registry.New(ctx, sessionSources(ctx, env, roots), opts)
}

// sessionSources are the sources of a session's stored roots; roots that
// have disappeared are reported and skipped. A root that is a URL or an
// archive file is an archive source (openRoot).
func sessionSources(ctx context.Context, env *Env, roots []string) []source.Source {
	var srcs []source.Source
	for i, r := range roots {
		src, err := env.openRoot(ctx, r, i)
		if err != nil {
			fmt.Fprintf(env.Stderr, "skillkit: warning: session root skipped: %v\n", err)
			continue
		}
		srcs = append(srcs, src)
	}
	return srcs
}

func sessionNew(env *Env, f *sessionFlags) *cobra.Command {
	var mode, placement, system, format string
	var maxLoaded int
	cmd := &cobra.Command{
		Use:   "new [--mode once|turn|session] [--placement tool-result|system] [--max-loaded N] [ROOT...]",
		Short: "Create a session over the given skill roots and print its ID",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var cfg sessionConfig
			var err error
			if cfg.Lifetime, err = loadstate.ParseLifetime(mode); err != nil {
				return fmt.Errorf("--mode: %w", err)
			}
			if cfg.Placement, err = assembly.ParsePlacement(placement); err != nil {
				return fmt.Errorf("--placement: %w", err)
			}
			if cfg.Catalog, err = assembly.ParseCatalogFormat(format); err != nil {
				return fmt.Errorf("--catalog-format: %w", err)
			}
			if maxLoaded < 0 {
				return fmt.Errorf("--max-loaded is %d; use 0 for no cap or a positive count", maxLoaded)
			}
			cfg.MaxLoaded, cfg.System = maxLoaded, system
			if cfg.Roots, err = resolveRoots(ctx, env, args); err != nil {
				return err
			}
			if len(cfg.Roots) == 0 {
				fmt.Fprintln(env.Stderr, "skillkit: warning: no skill roots found ($SKILLKIT_PATH, the project's .agents/skills, ~/.agents/skills); the session has no skills — pass ROOT arguments to give it some")
			}
			st, err := openStore(ctx, f)
			if err != nil {
				return err
			}
			defer st.Close()
			reg, err := registryFor(ctx, env, cfg.Roots)
			if err != nil {
				return err
			}
			printDiagnostics(env.Stderr, reg.Snapshot().Diagnostics())
			s, err := st.Create(ctx, "", cfg.meta())
			if err != nil {
				return err
			}
			c, err := conversation.Open(ctx, st, s.ID, f.agent, cfg.options(reg))
			if err != nil {
				return err
			}
			if _, err := c.PublishCatalog(ctx); err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, s.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&mode, "mode", loadstate.Turn.String(), "load lifetime: once, turn or session")
	cmd.Flags().StringVar(&placement, "placement", assembly.PlacementToolResult.String(), "where loaded content goes: tool-result or system")
	cmd.Flags().IntVar(&maxLoaded, "max-loaded", 0, "cap on loaded skills per agent, least recently used evicted (0: no cap)")
	cmd.Flags().StringVar(&system, "system", "", "system prompt")
	cmd.Flags().StringVar(&format, "catalog-format", assembly.FormatReminder.String(), "catalog format: reminder or list")
	return cmd
}

// resolveRoots makes the session's roots absolute, or resolves the default
// roots now so the session keeps using the same folders. A URL or archive
// file is opened now and kept as given (the session opens it again).
func resolveRoots(ctx context.Context, env *Env, args []string) ([]string, error) {
	if len(args) > 0 {
		out := make([]string, len(args))
		for i, a := range args {
			src, err := env.openRoot(ctx, a, i)
			if err != nil {
				return nil, fmt.Errorf("argument ROOT: %w", err)
			}
			out[i] = src.Path
			if isArchiveRoot(a) {
				out[i] = archiveRootPath(a)
			}
		}
		return out, nil
	}
	srcs, err := env.defaultRoots(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = s.Path
	}
	return out, nil
}

func sessionUser(env *Env, f *sessionFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "user ID TEXT",
		Short: "Record a user message (starts a turn)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openConversation(cmd.Context(), env, f, args[0])
			if err != nil {
				return err
			}
			defer done()
			_, err = c.User(cmd.Context(), args[1])
			return err
		},
	}
}

func sessionCall(env *Env, f *sessionFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "call ID TOOL [JSON]",
		Short: "Record a tool call and its result; print the result text (exit 1 on a tool error)",
		Long: "call records TOOL called with the JSON arguments as if the model had answered with that\n" +
			"call alone, runs it and prints its result. A tool the agent does not have, or arguments\n" +
			"that do not fit its schema, are recorded as error results, as a model's would be.",
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openConversation(cmd.Context(), env, f, args[0])
			if err != nil {
				return err
			}
			defer done()
			var raw json.RawMessage
			if len(args) == 3 {
				raw = json.RawMessage(args[2])
				if !json.Valid(raw) {
					return fmt.Errorf("argument JSON is not valid JSON: %s; pass the tool arguments as one JSON object, for example %s", args[2], exampleArgs(cmd.Context(), c, args[1]))
				}
			}
			res, err := c.Call(cmd.Context(), args[1], raw)
			if err != nil {
				return err
			}
			writeText(env.Stdout, res.Text)
			if res.IsError {
				return exitError{1}
			}
			return nil
		},
	}
}

// exampleArgs returns, quoted for a shell, arguments of the shape the
// agent's tool takes: its required properties with placeholder values.
func exampleArgs(ctx context.Context, c *conversation.Conversation, tool string) string {
	ts, err := c.Tools(ctx)
	if err != nil {
		return "'{}'"
	}
	for _, t := range ts {
		if t.Name != tool || t.InputSchema == nil {
			continue
		}
		example := map[string]any{}
		for _, p := range t.InputSchema.Required {
			switch prop := t.InputSchema.Properties[p]; {
			case prop != nil && prop.Type == "array":
				example[p] = []string{"..."}
			case prop != nil && (prop.Type == "integer" || prop.Type == "number"):
				example[p] = 1
			case prop != nil && prop.Type == "boolean":
				example[p] = true
			default:
				example[p] = "..."
			}
		}
		b, _ := json.Marshal(example)
		return "'" + string(b) + "'"
	}
	return "'{}'"
}

func sessionPrompt(env *Env, f *sessionFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompt ID [--json]",
		Short: "Print the exact next model request (never changes the session)",
		Long: "prompt prints the next request: messages and tools. --json prints\n" +
			"{\"messages\": [...], \"tools\": [...]} in the OpenAI Chat Completions shape.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := openConversation(cmd.Context(), env, f, args[0])
			if err != nil {
				return err
			}
			defer done()
			req, err := c.Request(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(env.Stdout, req)
			}
			_, err = fmt.Fprint(env.Stdout, req.Text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON in the Chat Completions shape")
	return cmd
}

func sessionShow(env *Env, f *sessionFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Print a session's configuration, events and state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(env.Stdout, s)
			}
			cfg, err := configOf(s)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "session %s (created %s)\nmode %s, placement %s, max loaded %d, roots %s\n\n",
				s.ID, s.Created.Format("2006-01-02 15:04:05"), cfg.Lifetime, cfg.Placement, cfg.MaxLoaded, strings.Join(cfg.Roots, ", "))
			for _, ev := range s.Events {
				line := ev.Text
				if len(ev.ToolCalls) > 0 {
					var calls []string
					for _, c := range ev.ToolCalls {
						calls = append(calls, c.Name+" "+c.Arguments)
					}
					line = strings.TrimSpace(line + " → " + strings.Join(calls, "; "))
				}
				if i := strings.IndexByte(line, '\n'); i >= 0 {
					line = line[:i] + " …"
				}
				agent := ev.Agent
				if agent == "" {
					agent = "-"
				}
				fmt.Fprintf(env.Stdout, "%4d  turn %d  %-9s %-10s %s\n", ev.Seq, ev.Turn, ev.Kind, agent, line)
			}
			if len(s.State) > 0 {
				fmt.Fprintln(env.Stdout, "\nstate:")
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				for _, k := range slices.Sorted(maps.Keys(s.State)) {
					fmt.Fprintf(tw, "  %s\t%s\n", k, s.State[k])
				}
				tw.Flush()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func sessionList(env *Env, f *sessionFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List the sessions in the store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer st.Close()
			infos, err := st.List(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCREATED\tEVENTS")
			for _, in := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%d\n", in.ID, in.Created.Format("2006-01-02 15:04:05"), in.LastSeq)
			}
			return tw.Flush()
		},
	}
}

func sessionRemove(env *Env, f *sessionFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID",
		Short: "Delete a session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd.Context(), f)
			if err != nil {
				return err
			}
			defer st.Close()
			return st.Delete(cmd.Context(), args[0])
		},
	}
}
