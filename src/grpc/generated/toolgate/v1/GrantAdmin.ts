// Original file: proto/toolgate/v1/grants.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ChangeResponse as _toolgate_v1_ChangeResponse, ChangeResponse__Output as _toolgate_v1_ChangeResponse__Output } from '../../toolgate/v1/ChangeResponse.ts';
import type { DeleteRowRequest as _toolgate_v1_DeleteRowRequest, DeleteRowRequest__Output as _toolgate_v1_DeleteRowRequest__Output } from '../../toolgate/v1/DeleteRowRequest.ts';
import type { GetRevisionRequest as _toolgate_v1_GetRevisionRequest, GetRevisionRequest__Output as _toolgate_v1_GetRevisionRequest__Output } from '../../toolgate/v1/GetRevisionRequest.ts';
import type { ListRowsRequest as _toolgate_v1_ListRowsRequest, ListRowsRequest__Output as _toolgate_v1_ListRowsRequest__Output } from '../../toolgate/v1/ListRowsRequest.ts';
import type { ListRowsResponse as _toolgate_v1_ListRowsResponse, ListRowsResponse__Output as _toolgate_v1_ListRowsResponse__Output } from '../../toolgate/v1/ListRowsResponse.ts';
import type { RevisionResponse as _toolgate_v1_RevisionResponse, RevisionResponse__Output as _toolgate_v1_RevisionResponse__Output } from '../../toolgate/v1/RevisionResponse.ts';
import type { SetRowRequest as _toolgate_v1_SetRowRequest, SetRowRequest__Output as _toolgate_v1_SetRowRequest__Output } from '../../toolgate/v1/SetRowRequest.ts';

export interface GrantAdminClient extends grpc.Client {
  DeleteRow(argument: _toolgate_v1_DeleteRowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  DeleteRow(argument: _toolgate_v1_DeleteRowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  DeleteRow(argument: _toolgate_v1_DeleteRowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  DeleteRow(argument: _toolgate_v1_DeleteRowRequest, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  deleteRow(argument: _toolgate_v1_DeleteRowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  deleteRow(argument: _toolgate_v1_DeleteRowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  deleteRow(argument: _toolgate_v1_DeleteRowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  deleteRow(argument: _toolgate_v1_DeleteRowRequest, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  
  GetRevision(argument: _toolgate_v1_GetRevisionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  GetRevision(argument: _toolgate_v1_GetRevisionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  GetRevision(argument: _toolgate_v1_GetRevisionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  GetRevision(argument: _toolgate_v1_GetRevisionRequest, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  getRevision(argument: _toolgate_v1_GetRevisionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  getRevision(argument: _toolgate_v1_GetRevisionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  getRevision(argument: _toolgate_v1_GetRevisionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  getRevision(argument: _toolgate_v1_GetRevisionRequest, callback: grpc.requestCallback<_toolgate_v1_RevisionResponse__Output>): grpc.ClientUnaryCall;
  
  ListRows(argument: _toolgate_v1_ListRowsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  ListRows(argument: _toolgate_v1_ListRowsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  ListRows(argument: _toolgate_v1_ListRowsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  ListRows(argument: _toolgate_v1_ListRowsRequest, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  listRows(argument: _toolgate_v1_ListRowsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  listRows(argument: _toolgate_v1_ListRowsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  listRows(argument: _toolgate_v1_ListRowsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  listRows(argument: _toolgate_v1_ListRowsRequest, callback: grpc.requestCallback<_toolgate_v1_ListRowsResponse__Output>): grpc.ClientUnaryCall;
  
  SetRow(argument: _toolgate_v1_SetRowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  SetRow(argument: _toolgate_v1_SetRowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  SetRow(argument: _toolgate_v1_SetRowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  SetRow(argument: _toolgate_v1_SetRowRequest, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  setRow(argument: _toolgate_v1_SetRowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  setRow(argument: _toolgate_v1_SetRowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  setRow(argument: _toolgate_v1_SetRowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  setRow(argument: _toolgate_v1_SetRowRequest, callback: grpc.requestCallback<_toolgate_v1_ChangeResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface GrantAdminHandlers extends grpc.UntypedServiceImplementation {
  DeleteRow: grpc.handleUnaryCall<_toolgate_v1_DeleteRowRequest__Output, _toolgate_v1_ChangeResponse>;
  
  GetRevision: grpc.handleUnaryCall<_toolgate_v1_GetRevisionRequest__Output, _toolgate_v1_RevisionResponse>;
  
  ListRows: grpc.handleUnaryCall<_toolgate_v1_ListRowsRequest__Output, _toolgate_v1_ListRowsResponse>;
  
  SetRow: grpc.handleUnaryCall<_toolgate_v1_SetRowRequest__Output, _toolgate_v1_ChangeResponse>;
  
}

export interface GrantAdminDefinition extends grpc.ServiceDefinition {
  DeleteRow: MethodDefinition<_toolgate_v1_DeleteRowRequest, _toolgate_v1_ChangeResponse, _toolgate_v1_DeleteRowRequest__Output, _toolgate_v1_ChangeResponse__Output>
  GetRevision: MethodDefinition<_toolgate_v1_GetRevisionRequest, _toolgate_v1_RevisionResponse, _toolgate_v1_GetRevisionRequest__Output, _toolgate_v1_RevisionResponse__Output>
  ListRows: MethodDefinition<_toolgate_v1_ListRowsRequest, _toolgate_v1_ListRowsResponse, _toolgate_v1_ListRowsRequest__Output, _toolgate_v1_ListRowsResponse__Output>
  SetRow: MethodDefinition<_toolgate_v1_SetRowRequest, _toolgate_v1_ChangeResponse, _toolgate_v1_SetRowRequest__Output, _toolgate_v1_ChangeResponse__Output>
}
