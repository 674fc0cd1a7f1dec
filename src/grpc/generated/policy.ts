import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApprovalRule as _toolgate_v1_ApprovalRule, ApprovalRule__Output as _toolgate_v1_ApprovalRule__Output } from './toolgate/v1/ApprovalRule.ts';
import type { ArgumentError as _toolgate_v1_ArgumentError, ArgumentError__Output as _toolgate_v1_ArgumentError__Output } from './toolgate/v1/ArgumentError.ts';
import type { ExplainRequest as _toolgate_v1_ExplainRequest, ExplainRequest__Output as _toolgate_v1_ExplainRequest__Output } from './toolgate/v1/ExplainRequest.ts';
import type { ExplainResponse as _toolgate_v1_ExplainResponse, ExplainResponse__Output as _toolgate_v1_ExplainResponse__Output } from './toolgate/v1/ExplainResponse.ts';
import type { GrantRow as _toolgate_v1_GrantRow, GrantRow__Output as _toolgate_v1_GrantRow__Output } from './toolgate/v1/GrantRow.ts';
import type { PolicyServiceClient as _toolgate_v1_PolicyServiceClient, PolicyServiceDefinition as _toolgate_v1_PolicyServiceDefinition } from './toolgate/v1/PolicyService.ts';
import type { Principal as _toolgate_v1_Principal, Principal__Output as _toolgate_v1_Principal__Output } from './toolgate/v1/Principal.ts';
import type { ResultGuards as _toolgate_v1_ResultGuards, ResultGuards__Output as _toolgate_v1_ResultGuards__Output } from './toolgate/v1/ResultGuards.ts';
import type { StageResult as _toolgate_v1_StageResult, StageResult__Output as _toolgate_v1_StageResult__Output } from './toolgate/v1/StageResult.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  toolgate: {
    v1: {
      ApprovalRule: MessageTypeDefinition<_toolgate_v1_ApprovalRule, _toolgate_v1_ApprovalRule__Output>
      ArgumentError: MessageTypeDefinition<_toolgate_v1_ArgumentError, _toolgate_v1_ArgumentError__Output>
      ExplainRequest: MessageTypeDefinition<_toolgate_v1_ExplainRequest, _toolgate_v1_ExplainRequest__Output>
      ExplainResponse: MessageTypeDefinition<_toolgate_v1_ExplainResponse, _toolgate_v1_ExplainResponse__Output>
      GrantRow: MessageTypeDefinition<_toolgate_v1_GrantRow, _toolgate_v1_GrantRow__Output>
      PolicyService: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_PolicyServiceClient> & { service: _toolgate_v1_PolicyServiceDefinition }
      Principal: MessageTypeDefinition<_toolgate_v1_Principal, _toolgate_v1_Principal__Output>
      ResultGuards: MessageTypeDefinition<_toolgate_v1_ResultGuards, _toolgate_v1_ResultGuards__Output>
      StageResult: MessageTypeDefinition<_toolgate_v1_StageResult, _toolgate_v1_StageResult__Output>
    }
  }
}

