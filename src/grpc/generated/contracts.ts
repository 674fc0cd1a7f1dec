import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApproveContractRequest as _toolgate_v1_ApproveContractRequest, ApproveContractRequest__Output as _toolgate_v1_ApproveContractRequest__Output } from './toolgate/v1/ApproveContractRequest.ts';
import type { ApproveContractResponse as _toolgate_v1_ApproveContractResponse, ApproveContractResponse__Output as _toolgate_v1_ApproveContractResponse__Output } from './toolgate/v1/ApproveContractResponse.ts';
import type { ContractChange as _toolgate_v1_ContractChange, ContractChange__Output as _toolgate_v1_ContractChange__Output } from './toolgate/v1/ContractChange.ts';
import type { ContractFieldChange as _toolgate_v1_ContractFieldChange, ContractFieldChange__Output as _toolgate_v1_ContractFieldChange__Output } from './toolgate/v1/ContractFieldChange.ts';
import type { ContractServiceClient as _toolgate_v1_ContractServiceClient, ContractServiceDefinition as _toolgate_v1_ContractServiceDefinition } from './toolgate/v1/ContractService.ts';
import type { DiffContractRequest as _toolgate_v1_DiffContractRequest, DiffContractRequest__Output as _toolgate_v1_DiffContractRequest__Output } from './toolgate/v1/DiffContractRequest.ts';
import type { DiffContractResponse as _toolgate_v1_DiffContractResponse, DiffContractResponse__Output as _toolgate_v1_DiffContractResponse__Output } from './toolgate/v1/DiffContractResponse.ts';
import type { LintFinding as _toolgate_v1_LintFinding, LintFinding__Output as _toolgate_v1_LintFinding__Output } from './toolgate/v1/LintFinding.ts';
import type { ListContractsRequest as _toolgate_v1_ListContractsRequest, ListContractsRequest__Output as _toolgate_v1_ListContractsRequest__Output } from './toolgate/v1/ListContractsRequest.ts';
import type { ListContractsResponse as _toolgate_v1_ListContractsResponse, ListContractsResponse__Output as _toolgate_v1_ListContractsResponse__Output } from './toolgate/v1/ListContractsResponse.ts';
import type { ToolContract as _toolgate_v1_ToolContract, ToolContract__Output as _toolgate_v1_ToolContract__Output } from './toolgate/v1/ToolContract.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  toolgate: {
    v1: {
      ApproveContractRequest: MessageTypeDefinition<_toolgate_v1_ApproveContractRequest, _toolgate_v1_ApproveContractRequest__Output>
      ApproveContractResponse: MessageTypeDefinition<_toolgate_v1_ApproveContractResponse, _toolgate_v1_ApproveContractResponse__Output>
      ContractChange: MessageTypeDefinition<_toolgate_v1_ContractChange, _toolgate_v1_ContractChange__Output>
      ContractFieldChange: MessageTypeDefinition<_toolgate_v1_ContractFieldChange, _toolgate_v1_ContractFieldChange__Output>
      ContractService: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_ContractServiceClient> & { service: _toolgate_v1_ContractServiceDefinition }
      DiffContractRequest: MessageTypeDefinition<_toolgate_v1_DiffContractRequest, _toolgate_v1_DiffContractRequest__Output>
      DiffContractResponse: MessageTypeDefinition<_toolgate_v1_DiffContractResponse, _toolgate_v1_DiffContractResponse__Output>
      LintFinding: MessageTypeDefinition<_toolgate_v1_LintFinding, _toolgate_v1_LintFinding__Output>
      ListContractsRequest: MessageTypeDefinition<_toolgate_v1_ListContractsRequest, _toolgate_v1_ListContractsRequest__Output>
      ListContractsResponse: MessageTypeDefinition<_toolgate_v1_ListContractsResponse, _toolgate_v1_ListContractsResponse__Output>
      ToolContract: MessageTypeDefinition<_toolgate_v1_ToolContract, _toolgate_v1_ToolContract__Output>
    }
  }
}

