// Original file: proto/toolgate/v1/common.proto

import type { Long } from '@grpc/proto-loader';

export interface GrantRow {
  'principal'?: (string);
  'tool'?: (string);
  'scopes'?: (string)[];
  'effect'?: (string);
  'revision'?: (number | string | Long);
  'when'?: (string);
  'enforcement'?: (string);
  'name'?: (string);
}

export interface GrantRow__Output {
  'principal': (string);
  'tool': (string);
  'scopes': (string)[];
  'effect': (string);
  'revision': (number);
  'when': (string);
  'enforcement': (string);
  'name': (string);
}
