// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title DevToken
/// @notice A plain ERC-20 with neither EIP-2612 permits nor EIP-3009
/// authorisations, as USDT is on mainnet: moving it out of an address takes
/// a transaction from that address, paid in the native coin. Tests of the
/// sweep deploy it; the dev stack does not. It is for local chains only.
contract DevToken {
    string public constant name = "Dev Tether";
    string public constant symbol = "USDT";
    uint8 public constant decimals = 6;

    address public immutable owner;
    uint256 public totalSupply;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor() {
        owner = msg.sender;
    }

    /// @notice Creates `amount` tokens for `to`. Only the deployer may mint,
    /// so a test cannot fund itself by accident through a shared dev account.
    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "DevToken: not owner");
        require(to != address(0), "DevToken: mint to zero");
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= amount, "DevToken: insufficient allowance");
            allowance[from][msg.sender] = allowed - amount;
        }
        _transfer(from, to, amount);
        return true;
    }

    function _transfer(address from, address to, uint256 amount) private {
        require(to != address(0), "DevToken: transfer to zero");
        uint256 balance = balanceOf[from];
        require(balance >= amount, "DevToken: insufficient balance");
        unchecked {
            balanceOf[from] = balance - amount;
        }
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
