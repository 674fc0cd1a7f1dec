// Original file: proto/toolgate/v1/validator.proto

import type { Principal as _toolgate_v1_Principal, Principal__Output as _toolgate_v1_Principal__Output } from '../../toolgate/v1/Principal.ts';

export interface ValidateRequest {
  'event'?: (string);
  'phase'?: (string);
  'payloadJson'?: (string);
  'principal'?: (_toolgate_v1_Principal | null);
  'traceId'?: (string);
  'spanId'?: (string);
  'dryRun'?: (boolean);
  'validator'?: (string);
}

export interface ValidateRequest__Output {
  'event': (string);
  'phase': (string);
  'payloadJson': (string);
  'principal': (_toolgate_v1_Principal__Output | null);
  'traceId': (string);
  'spanId': (string);
  'dryRun': (boolean);
  'validator': (string);
}
