/**
 * Just enough of the shell to follow a Markdown walkthrough the way a reader pastes it: splits a
 * command into words (quotes, `$VAR` expansion, line continuations) and runs it with the real
 * `curl` binary, without a shell. Anything but a plain `curl` command (pipes, redirections,
 * command substitution, another program) is refused, never run.
 */
import { execFile } from 'node:child_process';

/** Shell metacharacters this splitter refuses outside quotes. */
const OPERATORS = new Set(['|', '&', ';', '<', '>', '(', ')', '`']);

/**
 * Splits a command line into words, expanding `$NAME` and `${NAME}` from `vars` outside single
 * quotes, as POSIX sh does for these simple forms.
 *
 * @throws Error on an unset variable, command substitution, an operator, or an unterminated quote
 */
export function shellWords(command: string, vars: Readonly<Record<string, string>>): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  const append = (text: string) => {
    word = (word ?? '') + text;
  };
  const expand = (): string => {
    // At a `$`: returns the value of the variable that follows.
    const braced = command[i + 1] === '{';
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(command.slice(i + (braced ? 2 : 1)));
    if (command[i + 1] === '(') throw new Error(`command substitution is not run: ${command}`);
    if (match === null) throw new Error(`unsupported $ expansion in: ${command}`);
    const name = match[0];
    i += name.length + (braced ? 3 : 1);
    const value = vars[name];
    if (value === undefined) throw new Error(`$${name} is used but was never set`);
    return value;
  };
  while (i < command.length) {
    const c = command[i]!;
    if (c === '\\' && command[i + 1] === '\n') {
      i += 2;
    } else if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== undefined) words.push(word);
      word = undefined;
      i++;
    } else if (c === '#' && word === undefined) {
      while (i < command.length && command[i] !== '\n') i++;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) throw new Error(`unterminated ' in: ${command}`);
      append(command.slice(i + 1, end));
      i = end + 1;
    } else if (c === '"') {
      append('');
      i++;
      while (command[i] !== '"') {
        if (i >= command.length) throw new Error(`unterminated " in: ${command}`);
        const d = command[i]!;
        if (d === '\\' && '$`"\\\n'.includes(command[i + 1] ?? '')) {
          if (command[i + 1] !== '\n') append(command[i + 1]!);
          i += 2;
        } else if (d === '$') {
          append(expand());
        } else if (d === '`') {
          throw new Error(`command substitution is not run: ${command}`);
        } else {
          append(d);
          i++;
        }
      }
      i++;
    } else if (c === '\\') {
      append(command[i + 1] ?? '');
      i += 2;
    } else if (c === '$') {
      append(expand());
    } else if (OPERATORS.has(c)) {
      throw new Error(`shell operator ${c} is not run: ${command}`);
    } else {
      append(c);
      i++;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * Runs `curl` with the words of a command (no shell).
 *
 * @throws Error when the command is not `curl`, or curl fails (exit status other than 0)
 */
export function runCurl(words: readonly string[]): Promise<string> {
  if (words[0] !== 'curl') throw new Error(`only curl is run, not: ${words.join(' ')}`);
  return new Promise((resolve, reject) => {
    execFile('curl', words.slice(1), { timeout: 15_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${words.join(' ')} failed: ${error.message} ${stderr}`));
      else resolve(stdout);
    });
  });
}
