/**
 * TypeDoc plugin: the API reference's own lint. Each rule reports a warning, which
 * `treatWarningsAsErrors` turns into a failed docs build (`npm run docs`).
 *
 * 1. Every export of a public module carries a `@group` tag (a feature or an RFC, listed in
 *    `groupOrder` of `typedoc.json`). An export without one would land in a group named after its
 *    kind ("Interfaces", "Functions").
 * 2. Every exported function documents each parameter, its return value (unless it returns
 *    nothing), the specification it implements (`@see`), and has an `@example`.
 * 3. Every other export (class, interface, type, variable) has a `@see` and an `@example` too.
 *    `scripts/check-tsdoc-examples.mjs` compiles the examples.
 */
import { Application, ReflectionKind } from 'typedoc';

/** Return types that need no `@returns`. */
const NOTHING = new Set(['void', 'Promise<void>', 'never', 'undefined']);

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => {
    const modules = project.getChildrenByKind(ReflectionKind.Module);
    for (const module of modules.length > 0 ? modules : [project]) {
      const known = new Set(app.options.getValue('groupOrder'));
      for (const group of module.groups ?? []) {
        for (const child of group.children) {
          // A re-export of a symbol documented in another module carries that module's group.
          if (child.kind === ReflectionKind.Reference) continue;
          if (group.title === ReflectionKind.pluralString(child.kind)) {
            app.logger.warn(`${module.name}: ${child.name} has no @group tag (use a group of groupOrder)`);
          } else if (!known.has(group.title)) {
            app.logger.warn(
              `${module.name}: ${child.name} is in group "${group.title}", which groupOrder does not list`,
            );
          }
        }
      }
      for (const child of module.children ?? []) {
        if (child.kind === ReflectionKind.Function) checkFunction(app, module, child);
        else if (child.kind !== ReflectionKind.Reference) checkDeclaration(app, module, child);
      }
    }
  });
}

/** Reports the tags `comment` lacks. */
function requireTags(app, where, comment, tags) {
  const missing = tags.filter((tag) => comment?.getTag(tag) === undefined);
  if (missing.length > 0) app.logger.warn(`${where} has no ${missing.join(', ')}`);
}

function checkFunction(app, module, fn) {
  for (const signature of fn.signatures ?? []) {
    const where = `${module.name}: ${fn.name}()`;
    requireTags(app, where, signature.comment, ['@example', '@see']);
    const returned = signature.type?.toString() ?? 'void';
    if (!NOTHING.has(returned) && signature.comment?.getTag('@returns') === undefined) {
      app.logger.warn(`${where} has no @returns`);
    }
    for (const parameter of signature.parameters ?? []) {
      if (parameter.comment === undefined || parameter.comment.summary.length === 0) {
        app.logger.warn(`${where} does not document its parameter '${parameter.name}' (@param)`);
      }
    }
  }
}

function checkDeclaration(app, module, declaration) {
  const kind = ReflectionKind.singularString(declaration.kind).toLowerCase();
  requireTags(app, `${module.name}: ${kind} ${declaration.name}`, declaration.comment, ['@example', '@see']);
}
