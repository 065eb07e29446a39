// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title DevPriceFeed
/// @notice A Chainlink AggregatorV3-compatible price feed for the development
/// chain. The engine reads it exactly as it reads a real Chainlink feed, while
/// tests move the price with setAnswer to exercise quoting and slippage.
contract DevPriceFeed {
    uint8 public constant decimals = 8;
    uint256 public constant version = 4;

    address public immutable owner;
    string public description;

    uint80 private _roundId;
    int256 private _answer;
    uint256 private _updatedAt;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    constructor(string memory description_, int256 initialAnswer) {
        owner = msg.sender;
        description = description_;
        _setAnswer(initialAnswer);
    }

    /// @notice Publishes a new answer (with 8 decimals) as a new round. Only
    /// the deployer may do so, as only Chainlink's oracles may on a real feed.
    function setAnswer(int256 newAnswer) external {
        require(msg.sender == owner, "DevPriceFeed: not owner");
        _setAnswer(newAnswer);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return (_roundId, _answer, _updatedAt, _updatedAt, _roundId);
    }

    function latestAnswer() external view returns (int256) {
        return _answer;
    }

    function _setAnswer(int256 newAnswer) private {
        _roundId += 1;
        _answer = newAnswer;
        _updatedAt = block.timestamp;
        emit AnswerUpdated(newAnswer, _roundId, block.timestamp);
    }
}
