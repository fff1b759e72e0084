// The TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.32, protocol
// 2025-11-25, sessions) over StreamableHTTPClientTransport:
//
//   node v1.mjs URL SKILL [DOC]
//
// initialize, tools/list, tools/call `skill` {"name": SKILL} (and once with a
// name no server has), with DOC tools/call `skill_read` {"skill": SKILL,
// "path": DOC} in the same session and again in a second session that never
// loaded SKILL, the custom request skills/list, resources/list,
// resources/read of SKILL's SKILL.md (the URI skills/list gives for it, else
// skill://SKILL/SKILL.md), prompts/list and, when a prompt is named SKILL,
// prompts/get. Prints one JSON object of what it saw; a failed step is
// recorded as {error} in place. Exit status 1 only when it cannot connect.
import './npm.mjs';

const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { ResultSchema } = await import('@modelcontextprotocol/sdk/types.js');

const [url, name, doc] = process.argv.slice(2);
if (!url || !name) {
    console.error('usage: node v1.mjs URL SKILL [DOC]');
    process.exit(2);
}

const errorInfo = err => ({ name: err?.name, code: err?.code, message: String(err?.message ?? err), data: err?.data });
async function step(fn) {
    try {
        return await fn();
    } catch (err) {
        return { error: errorInfo(err) };
    }
}

const out = { url, skill: name };
const client = new Client({ name: 'skillkit-v1', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
    await client.connect(transport);
    out.protocolVersion = transport.protocolVersion;
    out.sessionId = transport.sessionId;
    out.serverInfo = client.getServerVersion();
    out.capabilities = client.getServerCapabilities();
    out.instructions = client.getInstructions();

    out.tools = await step(async () => (await client.listTools()).tools);
    out.callSkill = await step(() => client.callTool({ name: 'skill', arguments: { name } }));
    out.callUnknownSkill = await step(() => client.callTool({ name: 'skill', arguments: { name: 'skillkit-no-such-skill-4c1d' } }));
    if (doc) {
        const args = { name: 'skill_read', arguments: { skill: name, path: doc } };
        out.readDoc = await step(() => client.callTool(args));
        // A second session: it has loaded nothing.
        out.readDocOtherSession = await step(async () => {
            const other = new Client({ name: 'skillkit-v1-other', version: '1.0.0' });
            const t = new StreamableHTTPClientTransport(new URL(url));
            await other.connect(t);
            try {
                return { sessionId: t.sessionId, ...(await other.callTool(args)) };
            } finally {
                await t.terminateSession().catch(() => {});
                await other.close();
            }
        });
    }

    // A custom method: the v1 SDK has no schema for it, so a loose result schema.
    out.skillsList = await step(() => client.request({ method: 'skills/list', params: {} }, ResultSchema));
    const listed = Array.isArray(out.skillsList.skills)
        ? out.skillsList.skills.find(s => s?.frontmatter?.name === name)
        : undefined;
    const uri = listed?.uri ?? `skill://${name}/SKILL.md`;

    out.resources = await step(async () => (await client.listResources()).resources);
    out.readSkill = await step(async () => ({ uri, ...(await client.readResource({ uri })) }));

    out.prompts = await step(async () => (await client.listPrompts()).prompts);
    if (Array.isArray(out.prompts) && out.prompts.some(p => p.name === name)) {
        out.getPrompt = await step(() => client.getPrompt({ name, arguments: {} }));
    }
    out.ping = await step(() => client.ping());
} catch (err) {
    out.fatal = errorInfo(err);
    process.exitCode = 1;
} finally {
    // Ends the session (HTTP DELETE) where the server keeps one.
    await step(() => transport.terminateSession?.());
    await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
