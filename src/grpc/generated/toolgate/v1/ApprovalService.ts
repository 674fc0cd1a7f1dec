// Original file: proto/toolgate/v1/approvals.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { DecideRequest as _toolgate_v1_DecideRequest, DecideRequest__Output as _toolgate_v1_DecideRequest__Output } from '../../toolgate/v1/DecideRequest.ts';
import type { DecideResponse as _toolgate_v1_DecideResponse, DecideResponse__Output as _toolgate_v1_DecideResponse__Output } from '../../toolgate/v1/DecideResponse.ts';
import type { ListPendingRequest as _toolgate_v1_ListPendingRequest, ListPendingRequest__Output as _toolgate_v1_ListPendingRequest__Output } from '../../toolgate/v1/ListPendingRequest.ts';
import type { ListPendingResponse as _toolgate_v1_ListPendingResponse, ListPendingResponse__Output as _toolgate_v1_ListPendingResponse__Output } from '../../toolgate/v1/ListPendingResponse.ts';

export interface ApprovalServiceClient extends grpc.Client {
  Decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  Decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  Decide(argument: _toolgate_v1_DecideRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  Decide(argument: _toolgate_v1_DecideRequest, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  decide(argument: _toolgate_v1_DecideRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  decide(argument: _toolgate_v1_DecideRequest, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
  
  ListPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  ListPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  ListPending(argument: _toolgate_v1_ListPendingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  ListPending(argument: _toolgate_v1_ListPendingRequest, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  listPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  listPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  listPending(argument: _toolgate_v1_ListPendingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  listPending(argument: _toolgate_v1_ListPendingRequest, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface ApprovalServiceHandlers extends grpc.UntypedServiceImplementation {
  Decide: grpc.handleUnaryCall<_toolgate_v1_DecideRequest__Output, _toolgate_v1_DecideResponse>;
  
  ListPending: grpc.handleUnaryCall<_toolgate_v1_ListPendingRequest__Output, _toolgate_v1_ListPendingResponse>;
  
}

export interface ApprovalServiceDefinition extends grpc.ServiceDefinition {
  Decide: MethodDefinition<_toolgate_v1_DecideRequest, _toolgate_v1_DecideResponse, _toolgate_v1_DecideRequest__Output, _toolgate_v1_DecideResponse__Output>
  ListPending: MethodDefinition<_toolgate_v1_ListPendingRequest, _toolgate_v1_ListPendingResponse, _toolgate_v1_ListPendingRequest__Output, _toolgate_v1_ListPendingResponse__Output>
}
