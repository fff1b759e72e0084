package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
)

// SkillName is the name of the skill tool.
const SkillName = "skill"

// SkillArgs are the arguments of the skill tool.
type SkillArgs struct {
	// Name is the exact name of the skill to load.
	Name string `json:"name" jsonschema:"The exact skill name from the available skills list."`
}

// Skill returns the skill tool: it loads one skill's instructions by its
// exact name and marks the skill loaded. Arguments that are not one JSON
// object of the schema are refused first; then the checks run in this
// order: invalid name, not listed, not model-invocable, then the body is
// read (a provider error is "Error: <message>"). The result's text is the
// skill's block itself.
func Skill() Tool {
	return builtin(SkillName,
		"Load a skill's full instructions by its exact name from the available skills list. Call it before taking task actions when the user names a skill or the task clearly matches a skill's description.",
		schemaFor[SkillArgs](), runSkill)
}

func runSkill(ctx context.Context, c Call) (Result, error) {
	var args SkillArgs
	if r, ok := decode(SkillName, c.Args, &args); !ok {
		return r, nil
	}
	text, err := RenderSkill(ctx, c.Skills, args.Name)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		res := Result{Text: text, IsError: true}
		if errors.Is(err, registry.ErrStale) {
			return res, err // Tool.Call renews the snapshot
		}
		return res, nil
	}
	return Result{Text: text, Effects: []Effect{skillEffect(args.Name)}}, nil
}

// ErrSkillCall is returned by RenderSkill together with the error text the
// model sees.
var ErrSkillCall = errors.New("skill call failed")

// RenderSkill returns exactly what the skill tool returns for name: the
// rendered skill block, or (with a non-nil error) the error text.
func RenderSkill(ctx context.Context, snap *registry.Snapshot, name string) (string, error) {
	return render(ctx, snap, name, func(sum skill.Summary) string {
		if !sum.ModelInvocable {
			return catalog.NotModelInvocableError(name)
		}
		return ""
	})
}

// RenderUserSkill returns the skill block added to the conversation when
// a user invokes NAME directly (by writing /NAME): the skill tool's
// rendering, for any skill the user may invoke — including those hidden
// from the model with disable-model-invocation, for which this is the only
// way in. Errors carry the same texts as the skill tool, or one saying the
// skill is not user-invocable.
func RenderUserSkill(ctx context.Context, snap *registry.Snapshot, name string) (string, error) {
	return render(ctx, snap, name, func(sum skill.Summary) string {
		if !sum.UserInvocable {
			return `Error: skill "` + name + `" is not available for user invocation`
		}
		return ""
	})
}

// render applies the skill tool's checks in order — name rule, listed, the
// caller's invocation check, readable body — and renders the result.
func render(ctx context.Context, snap *registry.Snapshot, name string, allowed func(skill.Summary) string) (string, error) {
	if !skill.ValidName(name) {
		return catalog.InvalidNameError(name), ErrSkillCall
	}
	if snap == nil {
		return catalog.UnknownSkillError(name), ErrSkillCall
	}
	sum, ok := snap.Lookup(name)
	if !ok {
		return catalog.UnknownSkillError(name), ErrSkillCall
	}
	if msg := allowed(sum); msg != "" {
		return msg, ErrSkillCall
	}
	body, err := snap.Body(ctx, name)
	if err != nil {
		if errors.Is(err, registry.ErrNotFound) {
			return catalog.UnknownSkillError(name), ErrSkillCall
		}
		if errors.Is(err, registry.ErrStale) {
			return catalog.ProviderError(err), fmt.Errorf("%w: %w", ErrSkillCall, err)
		}
		return catalog.ProviderError(err), ErrSkillCall
	}
	res := catalog.SkillResult{Name: name, Provider: sum.Source, Content: body}
	if sum.Path != "" {
		res.Resources = &catalog.ResourceBase{Kind: catalog.ResourceDirectory, Path: sum.Path}
	}
	text, err := catalog.RenderSkillResult(res)
	if err != nil {
		return catalog.ProviderError(err), ErrSkillCall
	}
	return text, nil
}
