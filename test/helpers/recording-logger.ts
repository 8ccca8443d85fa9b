import type { LogFields, Logger } from '../../src/core/context.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields?: LogFields;
}

/** A logger that keeps every line, for assertions. */
export function recordingLogger(): Logger & { lines: LogLine[]; text(): string } {
  const lines: LogLine[] = [];
  const log =
    (level: LogLine['level']) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, ...(fields === undefined ? {} : { fields }) });
    };
  return {
    lines,
    text: () => JSON.stringify(lines),
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
  };
}
