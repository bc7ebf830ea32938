// SPDX-License-Identifier: Apache-2.0
//
// TestUsdc: the sandbox's stand-in for Circle's USDC (FiatToken v2.2) on a local anvil chain.
//
// What it is: a minimal ERC-20 with 6 decimals and EIP-3009 (transferWithAuthorization,
// receiveWithAuthorization, cancelAuthorization), whose EIP-712 domain is {name "USDC", version "2",
// chainId, verifyingContract} like USDC on Base Sepolia, so x402 clients and facilitators built for
// that network work against it unchanged.
//
// Placement: the domain separator is computed at call time from block.chainid and address(this), and
// the only constructor-set value (the minter) is an immutable, i.e. part of the runtime code. The
// runtime code can therefore be copied to another address with anvil_setCode (the sandbox puts it at
// the Base Sepolia USDC address) and still be a correct token there.
//
// What it defends (same rules as USDC's ECRecover / FiatTokenV2):
//   - signatures with s in the upper half of the secp256k1 order (malleable twins) are rejected;
//   - v must be 27 or 28 (no 0/1 recovery ids);
//   - an authorization is usable only when validAfter < block.timestamp < validBefore;
//   - each (authorizer, nonce) is usable once; cancelled nonces cannot be used afterwards;
//   - receiveWithAuthorization only by the payee (front-running protection);
//   - contract signers (ERC-1271) are checked through isValidSignature, like USDC v2.2.
//   - EIP-2612 permit (as FiatTokenV2): nonces(owner) counts each owner's permits, a permit is usable once,
//     before its deadline, with the same signature rules (the x402 eip2612GasSponsoring extension uses it
//     to approve Permit2 without a transaction from the owner).
// What it does NOT do: no blacklist, pause, upgradeability, minter allowances or Permit2 support; mint is open to one fixed minter with no cap. It is test money and must never be
// deployed to a real network.
pragma solidity ^0.8.20;

interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4 magicValue);
}

contract TestUsdc {
    string public constant name = "USDC";
    string public constant symbol = "USDC";
    string public constant version = "2";
    uint8 public constant decimals = 6;

    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)");
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        keccak256("ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)");
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    // Half of the secp256k1 group order: signatures with a larger s are the malleable twin.
    uint256 private constant HALF_CURVE_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;

    /// The only address allowed to mint. Immutable: stored in the runtime code, so it survives anvil_setCode.
    address public immutable minter;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => mapping(bytes32 => bool)) private _authorizationStates;
    /// EIP-2612: the next permit nonce of each owner.
    mapping(address => uint256) public nonces;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    constructor(address minter_) {
        require(minter_ != address(0), "TestUsdc: minter is the zero address");
        minter = minter_;
    }

    /// EIP-712 domain separator, recomputed on every call from the current chain id and address.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(EIP712_DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), block.chainid, address(this))
        );
    }

    // ---------------------------------------------------------------- ERC-20

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        require(spender != address(0), "ERC20: approve to the zero address");
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(value <= allowed, "ERC20: transfer amount exceeds allowance");
        if (allowed != type(uint256).max) {
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    // ---------------------------------------------------------------- EIP-2612

    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        _permit(owner, spender, value, deadline, abi.encodePacked(r, s, v));
    }

    function permit(address owner, address spender, uint256 value, uint256 deadline, bytes memory signature) external {
        _permit(owner, spender, value, deadline, signature);
    }

    function _permit(address owner, address spender, uint256 value, uint256 deadline, bytes memory signature) internal {
        require(deadline >= block.timestamp, "FiatTokenV2: permit is expired");
        require(spender != address(0), "ERC20: approve to the zero address");
        bytes32 digest = _digest(keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, nonces[owner]++, deadline)));
        _requireValidSignature(owner, digest, signature);
        allowance[owner][spender] = value;
        emit Approval(owner, spender, value);
    }

    /// Creates `amount` raw units (6 decimals) for `to`. Only the immutable minter may call it.
    function mint(address to, uint256 amount) external returns (bool) {
        require(msg.sender == minter, "TestUsdc: caller is not the minter");
        require(to != address(0), "TestUsdc: mint to the zero address");
        require(amount > 0, "TestUsdc: mint amount not greater than 0");
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
        return true;
    }

    // ---------------------------------------------------------------- EIP-3009

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _useAuthorization(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v));
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _useAuthorization(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature);
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _useAuthorization(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v));
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _useAuthorization(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature);
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, abi.encodePacked(r, s, v));
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        _cancelAuthorization(authorizer, nonce, signature);
    }

    // ---------------------------------------------------------------- internals

    function _transfer(address from, address to, uint256 value) internal {
        require(from != address(0), "ERC20: transfer from the zero address");
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 fromBalance = balanceOf[from];
        require(value <= fromBalance, "ERC20: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = fromBalance - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }

    /// transferWithAuthorization and receiveWithAuthorization, whose signed messages differ only by their type
    /// hash: a receive only by its payee, then the window, the unused nonce, the signature of `from`; the nonce is
    /// marked used and the value moved.
    function _useAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) internal {
        if (typeHash == RECEIVE_WITH_AUTHORIZATION_TYPEHASH) {
            require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        }
        _requireValidAuthorization(from, nonce, validAfter, validBefore);
        bytes32 structHash = keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce));
        _requireValidSignature(from, _digest(structHash), signature);
        _markAuthorizationAsUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) internal {
        _requireUnusedAuthorization(authorizer, nonce);
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        _requireValidSignature(authorizer, _digest(structHash), signature);
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) internal view {
        require(!_authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
    }

    function _requireValidAuthorization(address authorizer, bytes32 nonce, uint256 validAfter, uint256 validBefore)
        internal
        view
    {
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        _requireUnusedAuthorization(authorizer, nonce);
    }

    function _markAuthorizationAsUsed(address authorizer, bytes32 nonce) internal {
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationUsed(authorizer, nonce);
    }

    function _digest(bytes32 structHash) internal view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    /// EOAs: ECDSA with USDC's ECRecover rules. Contracts: ERC-1271 isValidSignature must return the magic value.
    function _requireValidSignature(address signer, bytes32 digest, bytes memory signature) internal view {
        if (signer.code.length > 0) {
            (bool ok, bytes memory result) =
                signer.staticcall(abi.encodeWithSelector(IERC1271.isValidSignature.selector, digest, signature));
            require(
                ok && result.length >= 32 && abi.decode(result, (bytes4)) == ERC1271_MAGIC_VALUE,
                "FiatTokenV2: invalid signature"
            );
            return;
        }
        require(_recover(digest, signature) == signer, "FiatTokenV2: invalid signature");
    }

    function _recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        require(signature.length == 65, "ECRecover: invalid signature length");
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        require(uint256(s) <= HALF_CURVE_ORDER, "ECRecover: invalid signature 's' value");
        require(v == 27 || v == 28, "ECRecover: invalid signature 'v' value");
        address recovered = ecrecover(digest, v, r, s);
        require(recovered != address(0), "ECRecover: invalid signature");
        return recovered;
    }
}
