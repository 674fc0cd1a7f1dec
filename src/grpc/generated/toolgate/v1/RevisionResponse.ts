// Original file: proto/toolgate/v1/grants.proto

import type { Long } from '@grpc/proto-loader';

export interface RevisionResponse {
  'revision'?: (number | string | Long);
}

export interface RevisionResponse__Output {
  'revision': (number);
}
