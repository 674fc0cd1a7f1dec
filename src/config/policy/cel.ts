import { createRequire } from 'node:module';
import type * as CelModule from '@bufbuild/cel';
import type * as CelExtensions from '@bufbuild/cel/ext';
import type * as WellKnownTypes from '@bufbuild/protobuf/wkt';

/**
 * @bufbuild/cel, loaded on first use. Only policies with grant conditions
 * need CEL, and with the protobuf runtime it brings it is the largest library
 * a policy sidecar would otherwise hold for nothing (~9 MB resident, ~3.5 MB
 * of long-lived heap built at start-up). The packages are ES modules without
 * top-level await, so require() loads them synchronously: compiling a
 * condition stays synchronous wherever a grant row is parsed.
 */
export interface Cel {
  readonly cel: typeof CelModule;
  readonly strings: typeof CelExtensions.strings;
  readonly timestampFromMs: typeof WellKnownTypes.timestampFromMs;
}

const require = createRequire(import.meta.url);
let loaded: Cel | undefined;

export function cel(): Cel {
  loaded ??= {
    cel: require('@bufbuild/cel') as typeof CelModule,
    strings: (require('@bufbuild/cel/ext') as typeof CelExtensions).strings,
    timestampFromMs: (require('@bufbuild/protobuf/wkt') as typeof WellKnownTypes).timestampFromMs,
  };
  return loaded;
}
