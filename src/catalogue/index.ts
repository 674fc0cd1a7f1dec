/** The catalogue module's public surface: toolgate's own view of the upstream's tools. */
export type { BuildStats, Catalogue, CatalogueTool } from './catalogue.ts';
export { buildCatalogue } from './catalogue.ts';
export type { CanonicalResult, DigestResult } from './digest.ts';
export { canonicalize, catalogueDigest, CONTRACT_FIELDS, sha256Hex, toolDigest } from './digest.ts';
export type { PageSource, WalkFailure, WalkLimits, WalkResult } from './paginate.ts';
export { DEFAULT_WALK_LIMITS, walkPages } from './paginate.ts';
export type { CatalogueSyncOptions, SyncStats } from './sync.ts';
export { CatalogueSync } from './sync.ts';
