package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// Limits of the output files embedded in a workspace_exec result: the
// text ones arrive inline in the tool's result already; binary ones are
// read from the workspace up to these sizes.
const (
	// maxBlobFile is the largest binary output file embedded.
	maxBlobFile = 1 << 20
	// maxBlobTotal bounds the binary bytes embedded in one result.
	maxBlobTotal = 4 << 20
)

// mcpTool describes t to MCP clients; the skill tool's description carries
// the catalog (within the agent's catalog budget), since an MCP host shows
// its model only tool descriptions.
func (s *Server) mcpTool(t tools.Tool, cat string) (*sdk.Tool, error) {
	mt := &sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	if mt.InputSchema == nil {
		mt.InputSchema = &jsonschema.Schema{Type: "object"}
	}
	if t.Name == tools.SkillName && cat != "" {
		mt.Description += "\n\n" + cat
	}
	if t.Name == tools.WorkspaceExecName {
		out, err := jsonschema.For[tools.ExecResult](nil)
		if err != nil {
			return nil, fmt.Errorf("mcp: the output schema of %s: %w", t.Name, err)
		}
		mt.OutputSchema = out
	}
	mt.Annotations = annotations(t.Name)
	return mt, nil
}

// annotations are the hints of the tools that only read.
func annotations(name string) *sdk.ToolAnnotations {
	switch name {
	case tools.SkillName, tools.ReadName, tools.ListDocsName, tools.LoadName, tools.SelectDocsName:
		return &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	}
	return nil
}

// toolHandler runs t in the caller's session.
func (s *Server) toolHandler(t tools.Tool, stateless bool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		sess, release, err := s.sessions.acquire(ctx, req, stateless)
		if errors.Is(err, errUnknownSession) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		if err != nil {
			return errorResult(err.Error()), nil
		}
		defer release()
		// The call ends with the request or with its session.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(sess.ctx, cancel)
		defer stop()
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		res, err := sess.conv.Call(ctx, t.Name, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %v", t.Name, err)}
		}
		if len(res.Effects) > 0 && t.Name != tools.SkillName && !res.IsError {
			// Tools that record a load (skill_load, skill_select_docs)
			// answer with a stub; the content is what the next request
			// would show the model.
			if text, err := s.loaded(ctx, sess); err == nil && text != "" {
				res.Text = text
			}
		}
		if overHTTP(req.Extra) {
			res.Text = s.remoteBase(ctx, res.Text)
		}
		out := s.result(sess, res)
		if stateless {
			out.Meta = sdk.Meta{SessionMetaKey: sess.id}
		}
		return out, nil
	}
}

// remoteBase rewrites each skill base directory in text, a path on the
// server's host that an HTTP client may not share, as the skill's
// skill:// base URL, whose files the client reads with resources/read.
// Over stdio the client runs on the same host, and the paths stay.
func (s *Server) remoteBase(ctx context.Context, text string) string {
	const marker = "Base directory for this skill: "
	if !strings.Contains(text, marker) {
		return text
	}
	for _, sum := range s.kit.Skills(ctx).Summaries() {
		if sum.Path == "" {
			continue
		}
		local := marker + catalog.EscapeText(sum.Path) + "\n" +
			"Resolve relative paths mentioned by this skill against the base directory before using them."
		if !strings.Contains(text, local) {
			continue
		}
		remote := "Base URL for this skill: " + skillBaseURI(sum.Name) + "\n" +
			"Resolve relative URLs mentioned by this skill against the base URL before using them."
		text = strings.ReplaceAll(text, local, remote)
		if !strings.Contains(text, marker) {
			break
		}
	}
	return text
}

// overHTTP reports whether a request came over HTTP.
func overHTTP(extra *sdk.RequestExtra) bool { return extra != nil && extra.Header != nil }

// loaded returns the content of the last tool result as the session's
// next request shows it.
func (s *Server) loaded(ctx context.Context, sess *session) (string, error) {
	req, err := sess.conv.Request(ctx)
	if err != nil {
		return "", err
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "tool" {
			return req.Messages[i].Content, nil
		}
	}
	return "", nil
}

// errorResult is a tool error the client's model sees.
func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "Error: " + msg}}}
}

// result maps a tool's result onto MCP content: the text, the structured
// result, and each output file as an embedded resource.
func (s *Server) result(sess *session, r tools.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: r.IsError, Content: []sdk.Content{&sdk.TextContent{Text: r.Text}}}
	if len(r.Structured) > 0 {
		out.StructuredContent = r.Structured
	}
	budget := int64(maxBlobTotal)
	for _, a := range r.Attachments {
		uri := workspaceURI(a.Name)
		switch {
		case a.Text != "" && !a.Truncated:
			out.Content = append(out.Content, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: uri, MIMEType: a.MIMEType, Text: a.Text}})
			continue
		case a.Text == "" && !isText(a.MIMEType) && a.Size <= maxBlobFile && a.Size <= budget:
			if data, err := s.readOutput(sess, a.Name, a.Size); err == nil {
				budget -= int64(len(data))
				out.Content = append(out.Content, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: uri, MIMEType: a.MIMEType, Blob: data}})
				continue
			}
		}
		size := a.Size
		out.Content = append(out.Content, &sdk.ResourceLink{URI: uri, Name: a.Name, MIMEType: a.MIMEType, Size: &size,
			Description: "output file not embedded (too large for the result); read it with a command in the workspace"})
	}
	return out
}

// workspaceURI names an output file of the session's workspace.
func workspaceURI(rel string) string { return "workspace:///" + rel }

// isText reports whether a MIME type is text, whose content the tool
// already inlines or deliberately cut.
func isText(mime string) bool {
	return strings.HasPrefix(mime, "text/") || strings.Contains(mime, "json")
}

// readOutput reads an output file from the session's workspace, opened
// beneath it without following links out of it, and only when it is
// still a regular file of the size collected.
func (s *Server) readOutput(sess *session, rel string, size int64) ([]byte, error) {
	dir := s.kit.WorkspaceDir(sess.id)
	if dir == "" {
		return nil, errors.New("no workspace")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() != size {
		return nil, fmt.Errorf("%s changed since it was collected: %w", rel, fs.ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(f, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("%s changed while read", rel)
	}
	return data, nil
}

// skillBaseURI is the base URL of a skill's files: skill://NAME/.
func skillBaseURI(name string) string { return strings.TrimSuffix(skillMDURI(name), skill.FileName) }
