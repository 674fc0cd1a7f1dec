// Original file: proto/toolgate/v1/approvals.proto

import type { Long } from '@grpc/proto-loader';

export interface Approval {
  'id'?: (string);
  'state'?: (string);
  'principal'?: (string);
  'tool'?: (string);
  'argumentsDigest'?: (string);
  'policyRevision'?: (string);
  'approverScope'?: (string);
  'selfApproval'?: (boolean);
  'createdAtMs'?: (number | string | Long);
  'expiresAtMs'?: (number | string | Long);
  'decidedBy'?: (string);
}

export interface Approval__Output {
  'id': (string);
  'state': (string);
  'principal': (string);
  'tool': (string);
  'argumentsDigest': (string);
  'policyRevision': (string);
  'approverScope': (string);
  'selfApproval': (boolean);
  'createdAtMs': (number);
  'expiresAtMs': (number);
  'decidedBy': (string);
}
