// Resolves bare imports ('@modelcontextprotocol/client', …) from the npm
// folder .ci/npm-setup fills, ${SKILLKIT_NPM_DIR:-$HOME/.cache/skillkit-npm},
// with Node's own ESM resolution (package "exports" included), so the
// packages never have to sit in a node_modules beside these scripts.
//
// A driver imports this file first, for its effect, and then loads packages
// with dynamic import(): static imports of the driver itself would be
// resolved before this hook is registered.
import { register } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Set on the hooks thread, where register loads this file a second time
// (with ?hooks, so that copy does not register again).
let parentURL;
const here = new URL('.', import.meta.url).href;

export function initialize(data) {
    parentURL = data.parentURL;
}

export async function resolve(specifier, context, nextResolve) {
    const bare = !/^(node:|data:|file:|\.{0,2}\/)/.test(specifier);
    if (parentURL && bare && context.parentURL?.startsWith(here)) {
        return nextResolve(specifier, { ...context, parentURL });
    }
    return nextResolve(specifier, context);
}

if (new URL(import.meta.url).search !== '?hooks') {
    const dir = process.env.SKILLKIT_NPM_DIR || join(homedir(), '.cache', 'skillkit-npm');
    // The parent is a file inside the folder, so resolution walks its node_modules.
    register(`${import.meta.url}?hooks`, { data: { parentURL: pathToFileURL(join(dir, 'package.json')).href } });
}
