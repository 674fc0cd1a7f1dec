import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApprovalRule as _toolgate_v1_ApprovalRule, ApprovalRule__Output as _toolgate_v1_ApprovalRule__Output } from './toolgate/v1/ApprovalRule.ts';
import type { ChangeResponse as _toolgate_v1_ChangeResponse, ChangeResponse__Output as _toolgate_v1_ChangeResponse__Output } from './toolgate/v1/ChangeResponse.ts';
import type { DeleteRowRequest as _toolgate_v1_DeleteRowRequest, DeleteRowRequest__Output as _toolgate_v1_DeleteRowRequest__Output } from './toolgate/v1/DeleteRowRequest.ts';
import type { GetRevisionRequest as _toolgate_v1_GetRevisionRequest, GetRevisionRequest__Output as _toolgate_v1_GetRevisionRequest__Output } from './toolgate/v1/GetRevisionRequest.ts';
import type { GrantAdminClient as _toolgate_v1_GrantAdminClient, GrantAdminDefinition as _toolgate_v1_GrantAdminDefinition } from './toolgate/v1/GrantAdmin.ts';
import type { GrantRow as _toolgate_v1_GrantRow, GrantRow__Output as _toolgate_v1_GrantRow__Output } from './toolgate/v1/GrantRow.ts';
import type { ListRowsRequest as _toolgate_v1_ListRowsRequest, ListRowsRequest__Output as _toolgate_v1_ListRowsRequest__Output } from './toolgate/v1/ListRowsRequest.ts';
import type { ListRowsResponse as _toolgate_v1_ListRowsResponse, ListRowsResponse__Output as _toolgate_v1_ListRowsResponse__Output } from './toolgate/v1/ListRowsResponse.ts';
import type { Principal as _toolgate_v1_Principal, Principal__Output as _toolgate_v1_Principal__Output } from './toolgate/v1/Principal.ts';
import type { RevisionResponse as _toolgate_v1_RevisionResponse, RevisionResponse__Output as _toolgate_v1_RevisionResponse__Output } from './toolgate/v1/RevisionResponse.ts';
import type { SetRowRequest as _toolgate_v1_SetRowRequest, SetRowRequest__Output as _toolgate_v1_SetRowRequest__Output } from './toolgate/v1/SetRowRequest.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  toolgate: {
    v1: {
      ApprovalRule: MessageTypeDefinition<_toolgate_v1_ApprovalRule, _toolgate_v1_ApprovalRule__Output>
      ChangeResponse: MessageTypeDefinition<_toolgate_v1_ChangeResponse, _toolgate_v1_ChangeResponse__Output>
      DeleteRowRequest: MessageTypeDefinition<_toolgate_v1_DeleteRowRequest, _toolgate_v1_DeleteRowRequest__Output>
      GetRevisionRequest: MessageTypeDefinition<_toolgate_v1_GetRevisionRequest, _toolgate_v1_GetRevisionRequest__Output>
      GrantAdmin: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_GrantAdminClient> & { service: _toolgate_v1_GrantAdminDefinition }
      GrantRow: MessageTypeDefinition<_toolgate_v1_GrantRow, _toolgate_v1_GrantRow__Output>
      ListRowsRequest: MessageTypeDefinition<_toolgate_v1_ListRowsRequest, _toolgate_v1_ListRowsRequest__Output>
      ListRowsResponse: MessageTypeDefinition<_toolgate_v1_ListRowsResponse, _toolgate_v1_ListRowsResponse__Output>
      Principal: MessageTypeDefinition<_toolgate_v1_Principal, _toolgate_v1_Principal__Output>
      RevisionResponse: MessageTypeDefinition<_toolgate_v1_RevisionResponse, _toolgate_v1_RevisionResponse__Output>
      SetRowRequest: MessageTypeDefinition<_toolgate_v1_SetRowRequest, _toolgate_v1_SetRowRequest__Output>
    }
  }
}

