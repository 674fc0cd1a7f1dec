// Original file: proto/toolgate/v1/contracts.proto

import type { Long } from '@grpc/proto-loader';

export interface ApproveContractResponse {
  'tool'?: (string);
  'digest'?: (string);
  'revision'?: (number | string | Long);
}

export interface ApproveContractResponse__Output {
  'tool': (string);
  'digest': (string);
  'revision': (number);
}
