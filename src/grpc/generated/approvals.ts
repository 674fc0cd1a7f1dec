import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Approval as _toolgate_v1_Approval, Approval__Output as _toolgate_v1_Approval__Output } from './toolgate/v1/Approval.ts';
import type { ApprovalServiceClient as _toolgate_v1_ApprovalServiceClient, ApprovalServiceDefinition as _toolgate_v1_ApprovalServiceDefinition } from './toolgate/v1/ApprovalService.ts';
import type { DecideRequest as _toolgate_v1_DecideRequest, DecideRequest__Output as _toolgate_v1_DecideRequest__Output } from './toolgate/v1/DecideRequest.ts';
import type { DecideResponse as _toolgate_v1_DecideResponse, DecideResponse__Output as _toolgate_v1_DecideResponse__Output } from './toolgate/v1/DecideResponse.ts';
import type { ListPendingRequest as _toolgate_v1_ListPendingRequest, ListPendingRequest__Output as _toolgate_v1_ListPendingRequest__Output } from './toolgate/v1/ListPendingRequest.ts';
import type { ListPendingResponse as _toolgate_v1_ListPendingResponse, ListPendingResponse__Output as _toolgate_v1_ListPendingResponse__Output } from './toolgate/v1/ListPendingResponse.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  toolgate: {
    v1: {
      Approval: MessageTypeDefinition<_toolgate_v1_Approval, _toolgate_v1_Approval__Output>
      ApprovalService: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_ApprovalServiceClient> & { service: _toolgate_v1_ApprovalServiceDefinition }
      DecideRequest: MessageTypeDefinition<_toolgate_v1_DecideRequest, _toolgate_v1_DecideRequest__Output>
      DecideResponse: MessageTypeDefinition<_toolgate_v1_DecideResponse, _toolgate_v1_DecideResponse__Output>
      ListPendingRequest: MessageTypeDefinition<_toolgate_v1_ListPendingRequest, _toolgate_v1_ListPendingRequest__Output>
      ListPendingResponse: MessageTypeDefinition<_toolgate_v1_ListPendingResponse, _toolgate_v1_ListPendingResponse__Output>
    }
  }
}

