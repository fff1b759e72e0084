package tools

// skillEffect is what the skill tool records: the skill loaded, its
// document selection unchanged, its instructions in the result's text.
func skillEffect(name string) Effect {
	return Effect{Kind: EffectLoad, Skill: name, DocsMode: DocsKeep, Inline: true}
}

// loadEffect is what skill_load records: the skill loaded, its document
// selection replaced when docs or include_all_docs is given, kept otherwise.
func loadEffect(a LoadArgs) Effect {
	e := Effect{Kind: EffectLoad, Skill: a.Skill, DocsMode: DocsKeep}
	switch {
	case a.IncludeAllDocs:
		e.DocsMode, e.AllDocs = DocsReplace, true
	case len(a.Docs) > 0:
		e.DocsMode, e.Docs = DocsReplace, a.Docs
	}
	return e
}

// selectEffect is what skill_select_docs records for a mode already
// checked: add, clear, or replace (also the empty mode).
func selectEffect(a SelectDocsArgs) Effect {
	e := Effect{Kind: EffectSelectDocs, Skill: a.Skill, Docs: a.Docs, AllDocs: a.IncludeAllDocs, DocsMode: DocsReplace}
	switch a.Mode {
	case ModeAdd:
		e.DocsMode = DocsAdd
	case ModeClear:
		e.DocsMode = DocsClear
	}
	if e.AllDocs {
		e.DocsMode = DocsReplace
	}
	return e
}
