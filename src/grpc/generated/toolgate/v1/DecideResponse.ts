// Original file: proto/toolgate/v1/approvals.proto

import type { Approval as _toolgate_v1_Approval, Approval__Output as _toolgate_v1_Approval__Output } from '../../toolgate/v1/Approval.ts';

export interface DecideResponse {
  'approval'?: (_toolgate_v1_Approval | null);
}

export interface DecideResponse__Output {
  'approval': (_toolgate_v1_Approval__Output | null);
}
