// Package mcp serves a kit's skills over the Model Context Protocol: the
// agent's skill tools as MCP tools, the catalog and user-invocable skills as
// prompts, and every file of every skill as a skill:// resource with the
// skills extension (io.modelcontextprotocol/skills, SEP-2640), over stdio
// or streamable HTTP. Server is the entry point.
//
// # The skills extension
//
// The server declares the extension with directoryRead, and the resources
// capability with list_changed. A skill named pdf is served at
// skill://pdf/SKILL.md (text/markdown) and its files at
// skill://pdf/<path>, each read with resources/read; skill://pdf and
// skill://pdf/<folder> are directory resources (inode/directory) listed
// with resources/directory/read. skills/list returns, a page at a time and
// each entry whole, every served skill with its front matter verbatim (every
// field, in the file's order) and its complete manifest: every file once,
// SKILL.md included, with "sha256:<hex>" digests and sizes pinned per
// registry snapshot, so they describe the very bytes resources/read serves.
// skills/get returns the same entry for one SKILL.md URI. The results carry
// resultType "complete", and skills/list and skills/get ttlMs and
// cacheScope.
//
// URIs are accepted in their canonical spelling only — the one the server
// writes, with the bytes outside RFC 3986's pchar set percent-encoded in
// upper-case hex. "..", ".", empty segments, escaped dots or slashes, NUL
// bytes, backslashes, a query or a fragment make a URI unknown (-32602),
// as do skills and files the registry snapshot does not list.
//
// A skill over the extension's limits (512 files, 16 MiB) — or whose name
// or front matter a skill entry cannot carry — is not served at all;
// Server.Withheld says which and why. When a refresh of the registry
// changes the skills, the server sends notifications/resources/list_changed.
package mcp
