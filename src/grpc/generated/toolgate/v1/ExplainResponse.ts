// Original file: proto/toolgate/v1/policy.proto

import type { StageResult as _toolgate_v1_StageResult, StageResult__Output as _toolgate_v1_StageResult__Output } from '../../toolgate/v1/StageResult.ts';
import type { GrantRow as _toolgate_v1_GrantRow, GrantRow__Output as _toolgate_v1_GrantRow__Output } from '../../toolgate/v1/GrantRow.ts';
import type { ArgumentError as _toolgate_v1_ArgumentError, ArgumentError__Output as _toolgate_v1_ArgumentError__Output } from '../../toolgate/v1/ArgumentError.ts';
import type { Principal as _toolgate_v1_Principal, Principal__Output as _toolgate_v1_Principal__Output } from '../../toolgate/v1/Principal.ts';
import type { ResultGuards as _toolgate_v1_ResultGuards, ResultGuards__Output as _toolgate_v1_ResultGuards__Output } from '../../toolgate/v1/ResultGuards.ts';
import type { Long } from '@grpc/proto-loader';

export interface ExplainResponse {
  'decision'?: (string);
  'reasonCodes'?: (string)[];
  'stages'?: (_toolgate_v1_StageResult)[];
  'grantReason'?: (string);
  'rows'?: (_toolgate_v1_GrantRow)[];
  'requiredScopes'?: (string)[];
  'argumentErrors'?: (_toolgate_v1_ArgumentError)[];
  'revision'?: (number | string | Long);
  'principal'?: (_toolgate_v1_Principal | null);
  'resultGuards'?: (_toolgate_v1_ResultGuards | null);
}

export interface ExplainResponse__Output {
  'decision': (string);
  'reasonCodes': (string)[];
  'stages': (_toolgate_v1_StageResult__Output)[];
  'grantReason': (string);
  'rows': (_toolgate_v1_GrantRow__Output)[];
  'requiredScopes': (string)[];
  'argumentErrors': (_toolgate_v1_ArgumentError__Output)[];
  'revision': (number);
  'principal': (_toolgate_v1_Principal__Output | null);
  'resultGuards': (_toolgate_v1_ResultGuards__Output | null);
}
