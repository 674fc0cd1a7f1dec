// Original file: proto/toolgate/v1/discovery.proto

import type { Candidate as _toolgate_v1_Candidate, Candidate__Output as _toolgate_v1_Candidate__Output } from '../../toolgate/v1/Candidate.ts';
import type { Long } from '@grpc/proto-loader';

export interface DiscoverResponse {
  'candidates'?: (_toolgate_v1_Candidate)[];
  'requestedLimit'?: (number);
  'effectiveLimit'?: (number);
  'authorizedCount'?: (number);
  'total'?: (number);
  'revision'?: (number | string | Long);
}

export interface DiscoverResponse__Output {
  'candidates': (_toolgate_v1_Candidate__Output)[];
  'requestedLimit': (number);
  'effectiveLimit': (number);
  'authorizedCount': (number);
  'total': (number);
  'revision': (number);
}
