import type { LogLevel } from '../config/settings.ts';

/**
 * JSON lines on stderr. Callers pass only identifiers, codes, sizes and
 * digests: never request content, arguments or exception text from peers.
 */
const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold = rank.info;

export function setLogLevel(level: LogLevel): void {
  threshold = rank[level];
}

export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

function write(level: LogLevel, msg: string, fields?: LogFields): void {
  if (rank[level] < threshold) return;
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
}

export const log = Object.freeze({
  debug: (msg: string, fields?: LogFields) => write('debug', msg, fields),
  info: (msg: string, fields?: LogFields) => write('info', msg, fields),
  warn: (msg: string, fields?: LogFields) => write('warn', msg, fields),
  error: (msg: string, fields?: LogFields) => write('error', msg, fields),
});
