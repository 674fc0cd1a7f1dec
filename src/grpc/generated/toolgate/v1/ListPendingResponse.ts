// Original file: proto/toolgate/v1/approvals.proto

import type { Approval as _toolgate_v1_Approval, Approval__Output as _toolgate_v1_Approval__Output } from '../../toolgate/v1/Approval.ts';

export interface ListPendingResponse {
  'approvals'?: (_toolgate_v1_Approval)[];
}

export interface ListPendingResponse__Output {
  'approvals': (_toolgate_v1_Approval__Output)[];
}
