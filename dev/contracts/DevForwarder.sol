// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title DevForwarder
/// @notice A minimal contract wallet for the development chain, paying the
/// native coin the way a Safe, an ERC-4337 account or an exchange's hot
/// wallet contract does: by an internal call, not as a transaction's own
/// value. Such a payment leaves no log and no trace in the receipt, only in
/// the call trace, and this contract deliberately emits no event, so the
/// engine has to find it through debug tracing as it would on mainnet.
contract DevForwarder {
    /// @notice The account that deployed the wallet, the only one that may
    /// spend its balance through execute.
    address public immutable owner;

    constructor() {
        owner = msg.sender;
    }

    /// @notice Accepts plain native payments, which execute can spend.
    receive() external payable {}

    /// @notice Sends the value of this call on to `to` at once, by an
    /// internal call; reverts if `to` does not accept it. Anyone may call it.
    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "DevForwarder: forward failed");
    }

    /// @notice Calls `to` with `value` from the wallet's own balance and
    /// `data`, as a Safe executes a transaction; reverts if the call does.
    /// Only the owner may call it.
    function execute(address to, uint256 value, bytes calldata data) external returns (bytes memory) {
        require(msg.sender == owner, "DevForwarder: not the owner");
        (bool ok, bytes memory result) = to.call{value: value}(data);
        require(ok, "DevForwarder: call failed");
        return result;
    }
}
