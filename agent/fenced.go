package agent

import (
	"encoding/json"
	"strings"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// CodeBlock is one fenced code block of a model's answer.
type CodeBlock struct {
	// Lang is the first word of the fence's info string, lower-cased
	// ("" when there is none).
	Lang string
	// Code is the block's content, without the fences.
	Code string
	// Closed reports that a closing fence ended the block; an unclosed
	// block runs to the end of the text (cut off, perhaps).
	Closed bool
}

// CodeBlocks returns the fenced code blocks of a Markdown text, in order:
// a fence is a line of three or more backticks or tildes, indented by at
// most three spaces, and the block ends at a line of at least as many of
// the same character with nothing else on it, or at the end of the text.
// Backtick fences whose info string holds a backtick are not fences, as
// in CommonMark.
func CodeBlocks(text string) []CodeBlock {
	var out []CodeBlock
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		ch, n, info, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		var code strings.Builder
		j, closed := i+1, false
		for ; j < len(lines); j++ {
			if closed = closingFence(lines[j], ch, n); closed {
				break
			}
			code.WriteString(lines[j])
		}
		lang, _, _ := strings.Cut(strings.TrimSpace(info), " ")
		out = append(out, CodeBlock{Lang: strings.ToLower(lang), Code: code.String(), Closed: closed})
		i = j
	}
	return out
}

// fenceIndent strips up to three spaces of indentation; ok is false for
// more.
func fenceIndent(line string) (string, bool) {
	for k := 0; k < 4; k++ {
		if k == len(line) || line[k] != ' ' {
			return line[k:], true
		}
	}
	return "", false
}

func openingFence(line string) (ch byte, n int, info string, ok bool) {
	s, ok := fenceIndent(strings.TrimRight(line, "\r\n"))
	if !ok || len(s) < 3 || s[0] != '`' && s[0] != '~' {
		return 0, 0, "", false
	}
	ch = s[0]
	for n < len(s) && s[n] == ch {
		n++
	}
	if n < 3 {
		return 0, 0, "", false
	}
	info = s[n:]
	if ch == '`' && strings.Contains(info, "`") {
		return 0, 0, "", false
	}
	return ch, n, info, true
}

func closingFence(line string, ch byte, n int) bool {
	s, ok := fenceIndent(strings.TrimRight(line, "\r\n"))
	if !ok {
		return false
	}
	m := 0
	for m < len(s) && s[m] == ch {
		m++
	}
	return m >= n && strings.TrimRight(s[m:], " \t") == ""
}

// shellCommand returns the shell command that runs a block of a language
// fenced code execution runs — shell and Python — and false for others.
func shellCommand(b CodeBlock) (string, bool) {
	b.Code = strings.ReplaceAll(b.Code, "\r\n", "\n")
	switch b.Lang {
	case "bash", "sh", "shell", "zsh":
		return b.Code, true
	case "python", "python3", "py":
		// A here-document whose delimiter the code does not contain.
		delim := "SKILLKIT_PY"
		for strings.Contains(b.Code, delim) {
			delim += "_"
		}
		code := b.Code
		if !strings.HasSuffix(code, "\n") {
			code += "\n"
		}
		return "python3 - <<'" + delim + "'\n" + code + delim + "\n", true
	}
	return "", false
}

// fencedCalls turns the runnable code blocks of an answer into
// workspace_exec calls, so the run records them as calls the runtime made
// for the model and answers them with their results. Only closed blocks
// run: an unclosed one may be cut off mid-command.
func fencedCalls(text, execName string) []session.ToolCall {
	var calls []session.ToolCall
	for _, b := range CodeBlocks(text) {
		cmd, ok := shellCommand(b)
		if !ok || !b.Closed || strings.TrimSpace(b.Code) == "" {
			continue
		}
		args, _ := json.Marshal(struct {
			Command string `json:"command"`
		}{cmd}) // a string only: cannot fail
		calls = append(calls, session.ToolCall{Name: execName, Arguments: string(args)})
	}
	return calls
}

// execToolName returns the name under which ts offers workspace_exec, or
// "" when it does not.
func execToolName(ts []tools.Tool) string {
	for _, t := range ts {
		if t.Builtin() == tools.WorkspaceExecName {
			return t.Name
		}
	}
	return ""
}
