// Package catalog renders what the model sees of skills: the catalog of
// available skills (the <system-reminder> block of the dsh skill tool,
// @deepseek-ai/dsh-tool-skill, byte for byte, or another format) and the
// result of the skill tool.
//
// A Catalog is built once from discovery's summaries. It keeps only the
// model-invocable skills, sorts them by name in byte order and runs every
// description through that tool's pipeline: normalize JavaScript
// whitespace, cap at DescriptionMaxLength UTF-16 code units with "...", then
// escape & < >. The order never depends on the request, so the rendered
// text is stable and the provider's prompt cache survives.
//
//	cat, err := catalog.New(summaries, nil) // nil: default cap of 500
//	if err != nil { ... }
//	text := cat.Render(catalog.Reminder{}) // "" when no skill is listed
//
// Optional pieces:
//
//   - Catalog.Fit renders within a token budget (counted offline by a
//     Counter): descriptions are shortened first, then skills are left out
//     with a visible note that says how many and how to reach them.
//   - Catalog.Digest identifies the content; a session that sees it change
//     appends a Replacement catalog (or the Tombstone) instead of editing
//     the message it sent before.
//   - RenderSkillResult and the *Error functions render what the skill
//     tool returns.
//
// The package reads no files: it works on in-memory summaries only.
package catalog
