// Original file: proto/toolgate/v1/grants.proto

import type { GrantRow as _toolgate_v1_GrantRow, GrantRow__Output as _toolgate_v1_GrantRow__Output } from '../../toolgate/v1/GrantRow.ts';

export interface SetRowRequest {
  'row'?: (_toolgate_v1_GrantRow | null);
}

export interface SetRowRequest__Output {
  'row': (_toolgate_v1_GrantRow__Output | null);
}
