// Original file: proto/toolgate/v1/grants.proto

import type { Long } from '@grpc/proto-loader';

export interface ChangeResponse {
  'revision'?: (number | string | Long);
  'changed'?: (boolean);
}

export interface ChangeResponse__Output {
  'revision': (number);
  'changed': (boolean);
}
