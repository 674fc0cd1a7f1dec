// Original file: proto/toolgate/v1/contracts.proto

import type { ToolContract as _toolgate_v1_ToolContract, ToolContract__Output as _toolgate_v1_ToolContract__Output } from '../../toolgate/v1/ToolContract.ts';

export interface ListContractsResponse {
  'contracts'?: (_toolgate_v1_ToolContract)[];
}

export interface ListContractsResponse__Output {
  'contracts': (_toolgate_v1_ToolContract__Output)[];
}
