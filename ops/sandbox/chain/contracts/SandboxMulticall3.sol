// SPDX-License-Identifier: Apache-2.0
//
// SandboxMulticall3: a stand-in for Multicall3, placed by the sandbox at its canonical address
// 0xcA11bde05977b3631167028862bE2a173976CA11 on the local anvil chain with anvil_setCode.
//
// Why: the official x402 EVM facilitator (@x402/evm 2.27.0) diagnoses a failed settlement simulation
// with one Multicall3 `tryAggregate` call (Permit2 allowance, balance, proxy presence, EIP-3009 nonce
// state). Without a contract at that address every failure collapses into a generic
// "simulation failed" reason; with it the facilitator reports e.g. `permit2_allowance_required`.
//
// What it is: our own implementation of the published Multicall3 interface subset the sandbox's users
// call (aggregate, tryAggregate, aggregate3, and the block/chain getters), not the deployed Multicall3
// bytecode. Calls are made with CALL and no value; msg.value sent to the payable functions stays here
// (as with Multicall3's non-value variants). No state, no immutables, no owner: its runtime code can be
// placed at any address. A sandbox tool: never deploy it to a real network.
pragma solidity ^0.8.28;

contract SandboxMulticall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// Every call must succeed; returns the block number and each call's return data.
    function aggregate(Call[] calldata calls) external payable returns (uint256 blockNumber, bytes[] memory returnData) {
        blockNumber = block.number;
        returnData = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            require(success, "Multicall3: call failed");
            returnData[i] = data;
        }
    }

    /// Runs every call; reverts on a failed call only when `requireSuccess`.
    function tryAggregate(bool requireSuccess, Call[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(success, "Multicall3: call failed");
            returnData[i] = Result(success, data);
        }
    }

    /// Runs every call; a failed call reverts the whole batch unless its allowFailure is set.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory data) = calls[i].target.call(calls[i].callData);
            require(success || calls[i].allowFailure, "Multicall3: call failed");
            returnData[i] = Result(success, data);
        }
    }

    function getBlockNumber() external view returns (uint256) {
        return block.number;
    }

    function getChainId() external view returns (uint256) {
        return block.chainid;
    }

    function getCurrentBlockTimestamp() external view returns (uint256) {
        return block.timestamp;
    }

    function getEthBalance(address account) external view returns (uint256) {
        return account.balance;
    }
}
