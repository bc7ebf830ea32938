// SPDX-License-Identifier: Apache-2.0
//
// x402UptoPermit2Proxy (sandbox stand-in): the spender of x402 `upto` Permit2 witness signatures, placed
// by the sandbox at the canonical address 0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002 on the local anvil
// chain with anvil_setCode.
//
// NOT the audited x402 contract. Its bytecode is not published on npm, so this is our own
// implementation, written from the ABI exported by @x402/evm 2.27.0 (`x402UptoPermit2ProxyABI`) and the
// documented behaviour of the `upto` scheme; no code was taken from the x402 repository. It must never
// be deployed to a real network.
//
// Behaviour: settle(permit, amount, owner, witness, signature) lets the facilitator named in the signed
// witness pull `amount` (at most the signed maximum) of the permitted token from `owner` to `witness.to`
// through Permit2's permitWitnessTransferFrom. The witness {to, facilitator, validAfter} is part of the
// signed Permit2 message (type string below, the EIP-712 types of @x402/evm's `uptoPermit2WitnessTypes`),
// so neither the recipient nor the facilitator can be changed after signing; Permit2 checks the
// signature, the deadline, the spender (this contract, msg.sender to Permit2) and the single-use nonce.
// settleWithPermit first submits the payer's EIP-2612 permit for Permit2 (for tokens that support it;
// a failing permit, e.g. one already used by a front-runner, is ignored and Permit2's own allowance check
// decides).
//
// What it defends, in this order: the caller must be witness.facilitator (UnauthorizedFacilitator);
// amount <= permit.permitted.amount (AmountExceedsPermitted); block.timestamp >= witness.validAfter
// (PaymentTooEarly); non-zero recipient (InvalidDestination) and owner (InvalidOwner); Permit2 must have
// code (InvalidPermit2Address); no re-entry (ReentrancyGuardReentrantCall, transient storage).
// Known limits: no admin, no pause, no rescue of tokens sent here by mistake; the Permit2 address is a
// constant (no immutables), so the runtime code can be copied to the canonical address unchanged.
pragma solidity ^0.8.28;

import {ISignatureTransfer} from "permit2/src/interfaces/ISignatureTransfer.sol";

interface IERC20PermitLike {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external;
}

contract x402UptoPermit2Proxy {
    /// Permit2 at its canonical address (the same on every chain).
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// EIP-712 type hash of the witness struct.
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    /// The witness part of Permit2's PermitWitnessTransferFrom type string (its stub ends with "uint256 deadline,").
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";

    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    event Settled();
    event SettledWithPermit();

    error AmountExceedsPermitted();
    error InvalidDestination();
    error InvalidOwner();
    error InvalidPermit2Address();
    error PaymentTooEarly();
    error Permit2612AmountMismatch();
    error ReentrancyGuardReentrantCall();
    error UnauthorizedFacilitator();

    bool private transient _entered;

    modifier nonReentrant() {
        if (_entered) revert ReentrancyGuardReentrantCall();
        _entered = true;
        _;
        _entered = false;
    }

    /// Transfers `amount` (<= the signed maximum) from `owner` to `witness.to`; only witness.facilitator may call.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _checkSettlement(permit, amount, owner, witness);
        _transfer(permit, amount, owner, witness, signature);
        emit Settled();
    }

    /// As settle, after submitting the owner's EIP-2612 permit that approves Permit2 for the signed maximum.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _checkSettlement(permit, amount, owner, witness);
        if (permit2612.value != permit.permitted.amount) revert Permit2612AmountMismatch();
        // A permit that fails (already used, token without EIP-2612) is ignored: Permit2's transfer then
        // succeeds only if the allowance is in place anyway.
        try IERC20PermitLike(permit.permitted.token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch {}
        _transfer(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _checkSettlement(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness
    ) private view {
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (block.timestamp < witness.validAfter) revert PaymentTooEarly();
        if (witness.to == address(0)) revert InvalidDestination();
        if (owner == address(0)) revert InvalidOwner();
        if (address(PERMIT2).code.length == 0) revert InvalidPermit2Address();
    }

    function _transfer(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            witnessHash,
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
