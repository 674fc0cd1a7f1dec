// Original file: proto/toolgate/v1/contracts.proto

import type { ContractFieldChange as _toolgate_v1_ContractFieldChange, ContractFieldChange__Output as _toolgate_v1_ContractFieldChange__Output } from '../../toolgate/v1/ContractFieldChange.ts';
import type { LintFinding as _toolgate_v1_LintFinding, LintFinding__Output as _toolgate_v1_LintFinding__Output } from '../../toolgate/v1/LintFinding.ts';

export interface ToolContract {
  'tool'?: (string);
  'digest'?: (string);
  'status'?: (string);
  'approvedDigests'?: (string)[];
  'quarantine'?: (string);
  'changes'?: (_toolgate_v1_ContractFieldChange)[];
  'findings'?: (_toolgate_v1_LintFinding)[];
}

export interface ToolContract__Output {
  'tool': (string);
  'digest': (string);
  'status': (string);
  'approvedDigests': (string)[];
  'quarantine': (string);
  'changes': (_toolgate_v1_ContractFieldChange__Output)[];
  'findings': (_toolgate_v1_LintFinding__Output)[];
}
