#!/usr/bin/env node
/**
 * Keeps the guides honest (`npm run check:snippets`, part of `npm test`).
 *
 * 1. Every fenced TypeScript block (`ts`, `typescript`, `tsx`) in the `.md` files under `docs/`
 *    (but `docs/api/`) and in the root
 *    `README.md` comes from a file that `tsc` checks: it is directly preceded by a marker naming
 *    that file,
 *
 *        <!-- snippet: examples/minimal-express/server.ts#create-app -->
 *
 *    and is byte-identical to it: the whole file, or the lines between `// #region create-app`
 *    and `// #endregion create-app` with their common indentation removed.
 *
 * That `docs/configuration.md` documents every option with the default `DEFAULTS` gives it is
 * checked by `test/docs/configuration.test.ts`, which reads the options from their schema.
 *
 * `node scripts/check-doc-snippets.mjs --write` rewrites the blocks from their sources instead of
 * failing. Exit code 0 when everything matches; 1 with the reasons otherwise.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const docsDir = join(root, 'docs');
const write = process.argv.includes('--write');
const failures = [];

const MARKER = /^<!-- snippet: ([^\s#]+)(?:#([\w-]+))? -->$/;
const FENCE = /^(`{3,})(\S*)\s*$/;
const TS_LANGUAGES = new Set(['ts', 'typescript', 'tsx']);

/** The text a marker points at, or a reason it cannot be read. */
function snippet(file, region) {
  let source;
  try {
    source = readFileSync(join(root, file), 'utf8');
  } catch {
    return { error: `${file} does not exist` };
  }
  if (region === undefined) return { text: source.replace(/\n$/, '') };
  const lines = source.split('\n');
  const start = lines.findIndex((l) => l.trim() === `// #region ${region}`);
  const end = lines.findIndex((l) => l.trim() === `// #endregion ${region}`);
  if (start === -1 || end <= start) return { error: `${file} has no region '${region}'` };
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)[0].length));
  return { text: body.map((l) => l.slice(indent)).join('\n') };
}

/** Checks (or rewrites) the fenced blocks of one markdown file. */
function checkMarkdown(path) {
  const name = path.slice(root.length + 1);
  const lines = readFileSync(path, 'utf8').split('\n');
  let changed = false;
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]);
    if (fence === null) continue;
    const close = lines.findIndex((l, j) => j > i && l.startsWith(fence[1]) && l.trim() === fence[1]);
    if (close === -1) {
      failures.push(`${name}:${i + 1}: unclosed code fence`);
      return;
    }
    const marker = MARKER.exec(lines[i - 1] ?? '');
    if (TS_LANGUAGES.has(fence[2])) {
      if (marker === null) {
        failures.push(
          `${name}:${i + 1}: a ${fence[2]} block needs a "<!-- snippet: path#region -->" line above it`,
        );
      } else {
        const found = snippet(marker[1], marker[2]);
        const actual = lines.slice(i + 1, close).join('\n');
        if (found.error !== undefined) failures.push(`${name}:${i}: ${found.error}`);
        else if (found.text !== actual) {
          if (write) {
            lines.splice(i + 1, close - i - 1, ...found.text.split('\n'));
            changed = true;
            i += found.text.split('\n').length + 1;
            continue;
          }
          failures.push(`${name}:${i + 1}: differs from ${marker[0].slice(14, -4)} (run with --write)`);
        }
      }
    } else if (marker !== null) {
      failures.push(`${name}:${i}: snippet markers go above ts blocks, not ${fence[2] || 'plain'} ones`);
    }
    i = close;
  }
  if (changed) {
    writeFileSync(path, lines.join('\n'));
    console.log(`rewrote the snippets of ${name}`);
  }
}

const markdown = [
  ...readdirSync(docsDir, { recursive: true })
    .filter((f) => f.endsWith('.md') && !f.startsWith('api'))
    .map((f) => join(docsDir, f)),
  join(root, 'README.md'),
];
for (const path of markdown) checkMarkdown(path);

if (failures.length > 0) {
  console.error(`check-doc-snippets: ${failures.length} problem(s)\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-doc-snippets: ${markdown.length} markdown files, snippets match their sources`);
