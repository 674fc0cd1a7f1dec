import { SchemaCache } from './cache.ts';
import { createSchemaRegistry } from './registry.ts';

/** What a cache is chosen by: the registered schemas of one policy version (frozen with it). */
export interface SchemaSource {
  readonly schemas: Readonly<Record<string, unknown>>;
}

/**
 * One validator cache per set of registered schemas: a validator compiled
 * against one registry must never serve another. Versions without registered
 * schemas share one cache, so a reload does not recompile every tool.
 */
export function schemaCaches(): (source: SchemaSource) => SchemaCache {
  const plain = new SchemaCache();
  const bySource = new WeakMap<SchemaSource, SchemaCache>();
  return (source) => {
    if (Object.keys(source.schemas).length === 0) return plain;
    let cache = bySource.get(source);
    if (cache === undefined) {
      const registry = createSchemaRegistry(source.schemas);
      // Policy loading already refused registries that cannot be built.
      cache = registry.ok ? new SchemaCache(4096, { registry: registry.registry }) : plain;
      bySource.set(source, cache);
    }
    return cache;
  };
}
