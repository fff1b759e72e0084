package tools

import "encoding/json"

// CallEffects returns the load effects a successful call of the named tool
// with these arguments records: the Effects its Handler returns, derived
// from the arguments alone (documents as the model named them). A session
// stores only the call and a short stub result, so request assembly uses
// this to tell what content each stored result introduced. Tools without
// load effects, and arguments that do not decode, give nil. Arguments are
// decoded with DecodeArgs, as the tools decode them, so a stored call the
// tool refused (a key twice, a misspelt key) never counts as a load.
func CallEffects(tool string, args json.RawMessage) []Effect {
	switch tool {
	case SkillName:
		var a SkillArgs
		if DecodeArgs(args, &a) != nil || a.Name == "" {
			return nil
		}
		return []Effect{skillEffect(a.Name)}
	case LoadName:
		var a LoadArgs
		if DecodeArgs(args, &a) != nil || a.Skill == "" {
			return nil
		}
		return []Effect{loadEffect(a)}
	case SelectDocsName:
		var a SelectDocsArgs
		if DecodeArgs(args, &a) != nil || a.Skill == "" {
			return nil
		}
		return []Effect{selectEffect(a)}
	}
	return nil
}

// skillEffect is what the skill tool records: the skill loaded, its
// document selection unchanged.
func skillEffect(name string) Effect {
	return Effect{Kind: EffectLoad, Skill: name, DocsMode: DocsKeep}
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

// selectEffect is what skill_select_docs records; a mode other than add
// or clear means replace, as upstream does.
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
