import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApprovalRule as _toolgate_v1_ApprovalRule, ApprovalRule__Output as _toolgate_v1_ApprovalRule__Output } from './toolgate/v1/ApprovalRule.ts';
import type { GrantRow as _toolgate_v1_GrantRow, GrantRow__Output as _toolgate_v1_GrantRow__Output } from './toolgate/v1/GrantRow.ts';
import type { Principal as _toolgate_v1_Principal, Principal__Output as _toolgate_v1_Principal__Output } from './toolgate/v1/Principal.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  toolgate: {
    v1: {
      ApprovalRule: MessageTypeDefinition<_toolgate_v1_ApprovalRule, _toolgate_v1_ApprovalRule__Output>
      GrantRow: MessageTypeDefinition<_toolgate_v1_GrantRow, _toolgate_v1_GrantRow__Output>
      Principal: MessageTypeDefinition<_toolgate_v1_Principal, _toolgate_v1_Principal__Output>
    }
  }
}

