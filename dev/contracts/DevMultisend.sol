// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IERC20Like {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @title DevMultisend
/// @notice A batch payer for the development chain, as exchanges and payout
/// services use on mainnet: one transaction that pays several recipients, or
/// the same recipient several times. The reconciliation run uses it to put
/// several transfers to one deposit address, or transfers to two deposit
/// addresses, in a single transaction.
contract DevMultisend {
    /// @notice Emitted for each native payment forwarded, since a transfer
    /// made by an internal call leaves no other trace in the receipt.
    event NativeSent(address indexed to, uint256 value);

    /// @notice Moves amounts[i] of token from the caller to recipients[i],
    /// each as its own Transfer log. The caller must have approved this
    /// contract for the total.
    function sendToken(address token, address[] calldata recipients, uint256[] calldata amounts) external {
        require(recipients.length == amounts.length, "DevMultisend: length mismatch");
        for (uint256 i = 0; i < recipients.length; i++) {
            require(IERC20Like(token).transferFrom(msg.sender, recipients[i], amounts[i]), "DevMultisend: transfer failed");
        }
    }

    /// @notice Forwards amounts[i] of the native coin to recipients[i]; the
    /// value sent must be exactly the total.
    function sendNative(address[] calldata recipients, uint256[] calldata amounts) external payable {
        require(recipients.length == amounts.length, "DevMultisend: length mismatch");
        uint256 total = 0;
        for (uint256 i = 0; i < recipients.length; i++) {
            total += amounts[i];
            (bool ok, ) = recipients[i].call{value: amounts[i]}("");
            require(ok, "DevMultisend: send failed");
            emit NativeSent(recipients[i], amounts[i]);
        }
        require(total == msg.value, "DevMultisend: value is not the total");
    }
}
