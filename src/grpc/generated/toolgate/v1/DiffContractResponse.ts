// Original file: proto/toolgate/v1/contracts.proto

import type { ContractChange as _toolgate_v1_ContractChange, ContractChange__Output as _toolgate_v1_ContractChange__Output } from '../../toolgate/v1/ContractChange.ts';

export interface DiffContractResponse {
  'tool'?: (string);
  'digest'?: (string);
  'approvedDigest'?: (string);
  'changes'?: (_toolgate_v1_ContractChange)[];
}

export interface DiffContractResponse__Output {
  'tool': (string);
  'digest': (string);
  'approvedDigest': (string);
  'changes': (_toolgate_v1_ContractChange__Output)[];
}
