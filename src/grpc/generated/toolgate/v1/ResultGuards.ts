// Original file: proto/toolgate/v1/policy.proto

import type { Long } from '@grpc/proto-loader';

export interface ResultGuards {
  'maxBytes'?: (number | string | Long);
  'redact'?: (string)[];
  'injection'?: (string);
  'enforcement'?: (string);
}

export interface ResultGuards__Output {
  'maxBytes': (number);
  'redact': (string)[];
  'injection': (string);
  'enforcement': (string);
}
