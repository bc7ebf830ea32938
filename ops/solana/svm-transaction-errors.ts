/**
 * Turns litesvm's transaction errors into the JSON the Solana RPC answers (`"BlockhashNotFound"`,
 * `{"InstructionError":[2,{"Custom":1}]}`), and says which errors mean the transaction never landed.
 * litesvm's error enums are `const enum`s with no runtime object, hence the name tables (their order is
 * litesvm 1.4.1's numbering; a different version must be checked against its internal.d.ts).
 * Defends against: an unknown error shape crashing the RPC (it becomes `{"Unknown": "<text>"}`).
 * Does not: cover errors litesvm does not produce.
 */
import type { FailedTransactionMetadata } from 'litesvm';

const TRANSACTION_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee',
  'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance',
  'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
] as const; // prettier-ignore

const INSTRUCTION_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged',
  'AccountNotExecutable', 'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync',
  'InvalidError', 'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId', 'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded',
  'InvalidSeeds', 'InvalidRealloc', 'ComputationalBudgetExceeded', 'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete', 'ProgramFailedToCompile', 'Immutable',
  'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow', 'UnsupportedSysvar',
  'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
] as const; // prettier-ignore

/** A transaction error as the Solana RPC's JSON has it. */
export type RpcTransactionError = string | Record<string, unknown>;

/** Errors after which the transaction is not recorded on a real cluster (no fee, no status). */
const NOT_LANDED = new Set<string>([
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'MissingSignatureForFee', 'InvalidAccountIndex',
  'SignatureFailure', 'SanitizeFailure', 'UnsupportedVersion', 'TooManyAccountLocks', 'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData', 'InvalidAddressLookupTableIndex',
]); // prettier-ignore

type LiteSvmError = ReturnType<FailedTransactionMetadata['err']>;

function instructionError(err: unknown): RpcTransactionError {
  if (typeof err === 'number') return INSTRUCTION_ERRORS[err] ?? `InstructionError${err}`;
  if (typeof err === 'object' && err !== null && 'code' in err) return { Custom: Number(err.code) };
  if (typeof err === 'object' && err !== null && 'msg' in err) return { BorshIoError: String(err.msg) };
  return { Unknown: String(err) };
}

/** litesvm's error → the RPC's JSON error. */
export function toRpcTransactionError(err: LiteSvmError): RpcTransactionError {
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? { Unknown: String(err) };
  if ('err' in err && 'index' in err) return { InstructionError: [err.index, instructionError(err.err())] };
  if ('index' in err) return { DuplicateInstruction: err.index };
  if ('accountIndex' in err) {
    const name = err.constructor.name.replace(/^TransactionError/, '');
    return { [name]: { account_index: err.accountIndex } };
  }
  return { Unknown: String(err) };
}

/** True when a real cluster would drop the transaction (it never lands: no status, no fee). */
export function isNotLanded(err: RpcTransactionError): boolean {
  return typeof err === 'string' && NOT_LANDED.has(err);
}
