// Original file: proto/toolgate/v1/common.proto

import type { ApprovalRule as _toolgate_v1_ApprovalRule, ApprovalRule__Output as _toolgate_v1_ApprovalRule__Output } from '../../toolgate/v1/ApprovalRule.ts';
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
  'approval'?: (_toolgate_v1_ApprovalRule | null);
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
  'approval': (_toolgate_v1_ApprovalRule__Output | null);
}
