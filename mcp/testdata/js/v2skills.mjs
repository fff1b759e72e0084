// The TypeScript SDK v2 client (@modelcontextprotocol/client) and its skills
// host side (ext/skills SkillsClient) against a server:
//
//   node v2skills.mjs URL [--version 2026-07-28|auto|legacy] [--skill NAME]
//
// It lists the skills (every page), gets each by its SKILL.md URI, reads and
// verifies every listed file (size, digest and, for SKILL.md, the front
// matter against the entry) and walks each skill's directory with
// resources/directory/read when the server offers it. It prints one JSON
// object of what it saw; a failed read is recorded in place (name, reason,
// message), so tampering shows up as data, not as a crash. With --skill it
// also lists the tools and calls the `skill` tool for NAME, as a plain v2
// client would. Exit status 1 only when it cannot connect or list.
import './npm.mjs';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';

const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
const { SkillsClient } = await import('@modelcontextprotocol/client/ext/skills');

const { values: opts, positionals } = parseArgs({
    allowPositionals: true,
    options: { version: { type: 'string', default: '2026-07-28' }, skill: { type: 'string' } }
});
const url = positionals[0];
if (!url) {
    console.error('usage: node v2skills.mjs URL [--version 2026-07-28|auto|legacy] [--skill NAME]');
    process.exit(2);
}
const mode = opts.version === 'auto' || opts.version === 'legacy' ? opts.version : { pin: opts.version };

const errorInfo = err => ({ name: err?.name, reason: err?.reason, code: err?.code, message: String(err?.message ?? err) });
const out = { url, negotiation: opts.version };

const client = new Client({ name: 'skillkit-v2skills', version: '1.0.0' }, { versionNegotiation: { mode } });
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
    await client.connect(transport);
    out.protocolVersion = client.getNegotiatedProtocolVersion();
    out.serverInfo = client.getServerVersion();
    out.capabilities = client.getServerCapabilities();

    if (opts.skill) {
        try {
            out.tools = (await client.listTools()).tools.map(t => t.name);
            out.callSkill = await client.callTool({ name: 'skill', arguments: { name: opts.skill } });
        } catch (err) {
            out.callSkill = { error: errorInfo(err) };
        }
    }

    const skills = new SkillsClient(client);
    out.supported = skills.supported;
    out.directoryRead = skills.directoryRead;

    const listing = await skills.list();
    out.list = { ttlMs: listing.ttlMs, cacheScope: listing.cacheScope, invalid: listing.invalid, skills: listing.skills };

    out.skills = [];
    for (const entry of listing.skills) {
        const seen = { uri: entry.uri };
        try {
            const got = await skills.get(entry.uri);
            seen.get = { ttlMs: got.ttlMs, cacheScope: got.cacheScope, same: JSON.stringify(got.skill) === JSON.stringify(entry) };
        } catch (err) {
            seen.get = { error: errorInfo(err) };
        }
        seen.files = [];
        const refs = Array.isArray(entry.resources) ? entry.resources.map(r => r.uri) : [entry.uri];
        for (const ref of refs) {
            try {
                const f = await skills.read(entry, ref);
                seen.files.push({
                    uri: f.uri,
                    mimeType: f.mimeType,
                    verified: f.verified,
                    size: f.bytes.length,
                    // Our own digest of the bytes the client accepted, for the test to compare.
                    digest: 'sha256:' + createHash('sha256').update(f.bytes).digest('hex'),
                    text: f.text,
                    frontmatter: f.frontmatter,
                    body: f.body
                });
            } catch (err) {
                seen.files.push({ uri: ref, error: errorInfo(err) });
            }
        }
        if (skills.directoryRead) {
            // Walk the skill's folder (bounded) to compare with the listed resources.
            const root = entry.uri.replace(/\/SKILL\.md$/, '');
            const dirs = [root];
            seen.directory = { files: [], dirs: [] };
            for (let i = 0; i < dirs.length && i < 64; i++) {
                try {
                    const page = await skills.readDirectory(dirs[i]);
                    if (i === 0) Object.assign(seen.directory, { ttlMs: page.ttlMs, cacheScope: page.cacheScope });
                    for (const r of page.resources) {
                        if (r.mimeType === 'inode/directory') {
                            seen.directory.dirs.push(r.uri);
                            dirs.push(r.uri);
                        } else {
                            seen.directory.files.push({ uri: r.uri, mimeType: r.mimeType, size: r.size });
                        }
                    }
                } catch (err) {
                    seen.directory.error = { dir: dirs[i], ...errorInfo(err) };
                    break;
                }
            }
        }
        out.skills.push(seen);
    }

    // A URI no server serves: skills/get must fail with -32602.
    try {
        await skills.get('skill://skillkit-no-such-skill-4c1d/SKILL.md');
        out.unknownGet = { error: null };
    } catch (err) {
        out.unknownGet = { error: errorInfo(err) };
    }
} catch (err) {
    out.fatal = errorInfo(err);
    process.exitCode = 1;
} finally {
    await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
