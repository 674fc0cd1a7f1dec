// Original file: proto/toolgate/v1/contracts.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ApproveContractRequest as _toolgate_v1_ApproveContractRequest, ApproveContractRequest__Output as _toolgate_v1_ApproveContractRequest__Output } from '../../toolgate/v1/ApproveContractRequest.ts';
import type { ApproveContractResponse as _toolgate_v1_ApproveContractResponse, ApproveContractResponse__Output as _toolgate_v1_ApproveContractResponse__Output } from '../../toolgate/v1/ApproveContractResponse.ts';
import type { DiffContractRequest as _toolgate_v1_DiffContractRequest, DiffContractRequest__Output as _toolgate_v1_DiffContractRequest__Output } from '../../toolgate/v1/DiffContractRequest.ts';
import type { DiffContractResponse as _toolgate_v1_DiffContractResponse, DiffContractResponse__Output as _toolgate_v1_DiffContractResponse__Output } from '../../toolgate/v1/DiffContractResponse.ts';
import type { ListContractsRequest as _toolgate_v1_ListContractsRequest, ListContractsRequest__Output as _toolgate_v1_ListContractsRequest__Output } from '../../toolgate/v1/ListContractsRequest.ts';
import type { ListContractsResponse as _toolgate_v1_ListContractsResponse, ListContractsResponse__Output as _toolgate_v1_ListContractsResponse__Output } from '../../toolgate/v1/ListContractsResponse.ts';

export interface ContractServiceClient extends grpc.Client {
  ApproveContract(argument: _toolgate_v1_ApproveContractRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  ApproveContract(argument: _toolgate_v1_ApproveContractRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  ApproveContract(argument: _toolgate_v1_ApproveContractRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  ApproveContract(argument: _toolgate_v1_ApproveContractRequest, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  approveContract(argument: _toolgate_v1_ApproveContractRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  approveContract(argument: _toolgate_v1_ApproveContractRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  approveContract(argument: _toolgate_v1_ApproveContractRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  approveContract(argument: _toolgate_v1_ApproveContractRequest, callback: grpc.requestCallback<_toolgate_v1_ApproveContractResponse__Output>): grpc.ClientUnaryCall;
  
  DiffContract(argument: _toolgate_v1_DiffContractRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  DiffContract(argument: _toolgate_v1_DiffContractRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  DiffContract(argument: _toolgate_v1_DiffContractRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  DiffContract(argument: _toolgate_v1_DiffContractRequest, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  diffContract(argument: _toolgate_v1_DiffContractRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  diffContract(argument: _toolgate_v1_DiffContractRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  diffContract(argument: _toolgate_v1_DiffContractRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  diffContract(argument: _toolgate_v1_DiffContractRequest, callback: grpc.requestCallback<_toolgate_v1_DiffContractResponse__Output>): grpc.ClientUnaryCall;
  
  ListContracts(argument: _toolgate_v1_ListContractsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  ListContracts(argument: _toolgate_v1_ListContractsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  ListContracts(argument: _toolgate_v1_ListContractsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  ListContracts(argument: _toolgate_v1_ListContractsRequest, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  listContracts(argument: _toolgate_v1_ListContractsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  listContracts(argument: _toolgate_v1_ListContractsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  listContracts(argument: _toolgate_v1_ListContractsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  listContracts(argument: _toolgate_v1_ListContractsRequest, callback: grpc.requestCallback<_toolgate_v1_ListContractsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface ContractServiceHandlers extends grpc.UntypedServiceImplementation {
  ApproveContract: grpc.handleUnaryCall<_toolgate_v1_ApproveContractRequest__Output, _toolgate_v1_ApproveContractResponse>;
  
  DiffContract: grpc.handleUnaryCall<_toolgate_v1_DiffContractRequest__Output, _toolgate_v1_DiffContractResponse>;
  
  ListContracts: grpc.handleUnaryCall<_toolgate_v1_ListContractsRequest__Output, _toolgate_v1_ListContractsResponse>;
  
}

export interface ContractServiceDefinition extends grpc.ServiceDefinition {
  ApproveContract: MethodDefinition<_toolgate_v1_ApproveContractRequest, _toolgate_v1_ApproveContractResponse, _toolgate_v1_ApproveContractRequest__Output, _toolgate_v1_ApproveContractResponse__Output>
  DiffContract: MethodDefinition<_toolgate_v1_DiffContractRequest, _toolgate_v1_DiffContractResponse, _toolgate_v1_DiffContractRequest__Output, _toolgate_v1_DiffContractResponse__Output>
  ListContracts: MethodDefinition<_toolgate_v1_ListContractsRequest, _toolgate_v1_ListContractsResponse, _toolgate_v1_ListContractsRequest__Output, _toolgate_v1_ListContractsResponse__Output>
}
