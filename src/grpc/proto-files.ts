import { resolve } from 'node:path';

/** Where the .proto files live, for loading at run time and for type generation. */
export const PROTO_ROOT = resolve(import.meta.dirname, '../../proto');

export const PROTO_FILES: readonly string[] = [
  'grpc/health/v1/health.proto',
  'toolgate/v1/common.proto',
  'toolgate/v1/policy.proto',
  'toolgate/v1/discovery.proto',
  'toolgate/v1/grants.proto',
  'toolgate/v1/contracts.proto',
  'toolgate/v1/approvals.proto',
  'toolgate/v1/validator.proto',
];
