// Original file: proto/toolgate/v1/grants.proto

import type { GrantRow as _toolgate_v1_GrantRow, GrantRow__Output as _toolgate_v1_GrantRow__Output } from '../../toolgate/v1/GrantRow.ts';
import type { Long } from '@grpc/proto-loader';

export interface ListRowsResponse {
  'rows'?: (_toolgate_v1_GrantRow)[];
  'revision'?: (number | string | Long);
}

export interface ListRowsResponse__Output {
  'rows': (_toolgate_v1_GrantRow__Output)[];
  'revision': (number);
}
