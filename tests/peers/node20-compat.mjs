// Lets @modelcontextprotocol/conformance run on Node 20.
//
// Its CLI bundle does `import { globSync } from "fs"` at the top, and fs.globSync only
// exists from Node 22, so on Node 20 the whole CLI fails to load. globSync is used only
// by its `tier-check` command (never by `server`/`client`/`list`), so this loader hook
// gives the conformance bundle (and nothing else) an `fs` with a globSync that throws.
// On Node >= 22 it does nothing.  Use: node --import ./node20-compat.mjs .../dist/index.js
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  const shim =
    "import fs from 'node:fs'; export * from 'node:fs'; export default fs;" +
    " export function globSync() { throw new Error('fs.globSync needs Node >= 22'); }";
  const hooks = `
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL &&
          /\\/(@modelcontextprotocol\\/conformance|conformance-next)\\/dist\\//.test(context.parentURL)) {
        return { url: ${JSON.stringify('data:text/javascript,' + encodeURIComponent(shim))}, shortCircuit: true };
      }
      return next(specifier, context);
    }`;
  register('data:text/javascript,' + encodeURIComponent(hooks));
}
