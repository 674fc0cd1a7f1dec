import { Lru } from '../bounded/lru.ts';
import { compileToolSchema, type CompileOptions } from './compile.ts';
import type { CompileResult } from './types.ts';

/**
 * Compiled validators keyed by the tool's contract digest, so each schema is
 * compiled once however many calls use it. Bounded, least recently used out
 * first. Refusals are cached too: compiling the same schema again would
 * refuse it again. A cache compiles against one registry for its whole life,
 * so a validator is never reused under another registry: a new registry needs
 * a new cache.
 */
export class SchemaCache {
  readonly #options: CompileOptions;
  readonly #entries: Lru<string, CompileResult>;

  constructor(maxEntries = 4_096, options: CompileOptions = {}) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    this.#entries = new Lru(maxEntries);
    this.#options = Object.freeze({ registry: options.registry });
  }

  /** The registry every entry was compiled against. */
  get registry(): CompileOptions['registry'] {
    return this.#options.registry;
  }

  /**
   * The digest must cover the schema (the catalogue's contract digest does):
   * a digest that stays the same while the schema changes would keep serving
   * the old validator.
   */
  get(digest: string, schema: unknown): CompileResult {
    const hit = this.#entries.get(digest);
    if (hit !== undefined) return hit;
    const compiled = compileToolSchema(schema, this.#options);
    this.#entries.set(digest, compiled);
    return compiled;
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}
