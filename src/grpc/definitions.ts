/**
 * The service definitions, loaded once from the .proto files at run time
 * (the generated types under generated/ describe the same shapes and are
 * used for types only). Options match the type generation: enums as
 * strings, 64-bit integers as numbers, defaults filled in.
 */
import {
  loadPackageDefinition,
  type GrpcObject,
  type ServiceClientConstructor,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { PROTO_FILES, PROTO_ROOT } from './proto-files.ts';

const LOADER_OPTIONS = Object.freeze({
  includeDirs: [PROTO_ROOT],
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

let loaded: GrpcObject | undefined;

function root(): GrpcObject {
  loaded ??= loadPackageDefinition(loadSync([...PROTO_FILES], LOADER_OPTIONS));
  return loaded;
}

/** The client constructor of a service by its full name, e.g. `toolgate.v1.Validator`. */
export function serviceClient(fullName: string): ServiceClientConstructor {
  let node: unknown = root();
  for (const part of fullName.split('.')) node = (node as Record<string, unknown>)[part];
  if (typeof node !== 'function') throw new TypeError(`no gRPC service ${fullName} in proto/`);
  return node as ServiceClientConstructor;
}

export function serviceDefinition(fullName: string): ServiceDefinition {
  return serviceClient(fullName).service;
}
