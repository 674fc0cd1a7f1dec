// Original file: proto/toolgate/v1/policy.proto

import type { Principal as _toolgate_v1_Principal, Principal__Output as _toolgate_v1_Principal__Output } from '../../toolgate/v1/Principal.ts';

export interface ExplainRequest {
  'principal'?: (_toolgate_v1_Principal | null);
  'credential'?: (string);
  'method'?: (string);
  'tool'?: (string);
  'argumentsJson'?: (string);
  'subject'?: "principal"|"credential";
}

export interface ExplainRequest__Output {
  'principal'?: (_toolgate_v1_Principal__Output | null);
  'credential'?: (string);
  'method': (string);
  'tool': (string);
  'argumentsJson': (string);
  'subject'?: "principal"|"credential";
}
