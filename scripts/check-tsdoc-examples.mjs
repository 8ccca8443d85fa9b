#!/usr/bin/env node
/**
 * Keeps the API reference's examples honest (`npm run check:examples`, part of `npm test`).
 *
 * Every public export of every entry point of `typedoc.json` (and every member of an exported
 * interface or class) may carry `@example` blocks. Each fenced `ts` block of them is compiled, as
 * its own module, with the repository's `tsconfig.json`: the bare `portcullis` specifiers resolve
 * to the sources through its `paths`, exactly as `docs/snippets/` do. An example must therefore be
 * self-contained: it imports what it uses from `portcullis`, `portcullis/express`, ... and declares
 * (`declare const x: T;`) what the reader is assumed to have.
 *
 * Nothing is written to disk: the examples are virtual files next to `src/`. Exit code 0 when
 * every example compiles; 1 with the diagnostics otherwise.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const typedoc = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8'));
const entryPoints = typedoc.entryPoints.map((p) => join(root, p));

const parsed = ts.parseJsonConfigFileContent(
  ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config,
  ts.sys,
  root,
);
const options = { ...parsed.options, noEmit: true };

// ---------------------------------------------------------------------------------------------
// 1. Collect the examples of the public API.

const sourceProgram = ts.createProgram(entryPoints, options);
const checker = sourceProgram.getTypeChecker();

/** `{ where, code }` for every fenced ts block of an `@example` of `node`. */
function examplesOf(node, where, out) {
  for (const tag of ts.getJSDocTags(node)) {
    if (tag.tagName.text !== 'example') continue;
    const text = ts.getTextOfJSDocComment(tag.comment) ?? '';
    for (const [, code] of text.matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)) out.push({ where, code });
  }
}

const seen = new Set();
const examples = [];
let declarations = 0;
for (const entry of entryPoints) {
  const file = sourceProgram.getSourceFile(entry);
  const moduleSymbol = file && checker.getSymbolAtLocation(file);
  if (moduleSymbol === undefined) throw new Error(`${entry}: not a module`);
  for (let symbol of checker.getExportsOfModule(moduleSymbol)) {
    if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    for (const decl of symbol.declarations ?? []) {
      const key = `${decl.getSourceFile().fileName}:${decl.pos}`;
      if (seen.has(key)) continue;
      seen.add(key);
      declarations++;
      const source = decl.getSourceFile();
      const at = (node) =>
        `${relative(root, source.fileName)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
      // `export const x = ...`: the comment sits on the variable statement.
      const commented = ts.isVariableDeclaration(decl) ? decl.parent.parent : decl;
      examplesOf(commented, `${symbol.name} (${at(decl)})`, examples);
      for (const member of decl.members ?? []) {
        const name = member.name && ts.isIdentifier(member.name) ? member.name.text : '(member)';
        examplesOf(member, `${symbol.name}.${name} (${at(member)})`, examples);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Compile them, each as a module of its own.

const virtual = new Map();
examples.forEach((example, i) => {
  // Files under src/ resolve like the sources; `export {}` makes each a module, so names never clash.
  const fileName = join(root, 'src', `__tsdoc_example_${i}.ts`);
  virtual.set(fileName, `${example.code}\nexport {};\n`);
  example.fileName = fileName;
});
const host = ts.createCompilerHost(options);
const readFile = host.readFile;
const fileExists = host.fileExists;
const getSourceFile = host.getSourceFile;
host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
host.getSourceFile = (name, languageVersion, onError, shouldCreate) =>
  virtual.has(name)
    ? ts.createSourceFile(name, virtual.get(name), languageVersion, true)
    : getSourceFile.call(host, name, languageVersion, onError, shouldCreate);

const program = ts.createProgram([...virtual.keys()], options, host, sourceProgram);
const byFile = new Map(examples.map((e) => [e.fileName, e]));
const failures = [];
for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
  const example = diagnostic.file === undefined ? undefined : byFile.get(diagnostic.file.fileName);
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n    ');
  if (example === undefined) {
    failures.push(message);
    continue;
  }
  const line = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line;
  const text = example.code.split('\n')[line] ?? '';
  failures.push(`${example.where}, example line ${line + 1}: ${message}\n    > ${text.trim()}`);
}

if (failures.length > 0) {
  console.error(`check-tsdoc-examples: ${failures.length} problem(s)\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `check-tsdoc-examples: ${examples.length} examples of ${declarations} public declarations compile`,
);
