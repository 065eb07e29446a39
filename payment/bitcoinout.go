package payment

import (
	"regexp"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// Bitcoin money out: a refund of a session paid in bitcoin, or a payout
// of bitcoin, is an Outgoing like an EVM one, with these differences
// (docs/decisions.md, "Bitcoin money out"):
//   - its transaction hash is the transaction's ID as Bitcoin writes it
//     (64 hexadecimal digits, no 0x), as a Bitcoin payment's is recorded;
//   - its LogIndex is the output (vout) that pays it: (network's chain ID
//     0, txid, vout) counts once across payments and money out;
//   - its source is the project environment's Bitcoin deposit key: the
//     transaction must spend only outputs the engine recorded at the
//     project's deposit addresses. The look says so by giving its
//     transfers the item's FromAddress as their sender (BitcoinUnproven
//     otherwise).

// Bitcoin tells whether it moves bitcoin on a Bitcoin network (which has
// no chain ID).
func (o Outgoing) Bitcoin() bool { return o.ChainID == 0 && o.Network != "" }

// BitcoinUnproven is the sender a Bitcoin look gives a transaction that
// spends an output not recorded at the project's deposit addresses.
const BitcoinUnproven = "(an output that is not the project's)"

var txidPattern = regexp.MustCompile(`^(0x)?[0-9a-fA-F]{64}$`)

// BitcoinTxIDProblem is the problem of a Bitcoin transaction ID that is
// not one.
const BitcoinTxIDProblem = "must be a Bitcoin transaction ID: 64 hexadecimal digits"

// NormalizeBitcoinTxID returns a Bitcoin transaction ID as the engine
// records it (lowercase, without 0x), and whether s is one.
func NormalizeBitcoinTxID(s string) (string, bool) {
	if !txidPattern.MatchString(s) {
		return "", false
	}
	return strings.ToLower(strings.TrimPrefix(s, "0x")), true
}

// bitcoinNets are the networks a Bitcoin address may be written for.
var bitcoinNets = []*chaincfg.Params{&chaincfg.MainNetParams, &chaincfg.TestNet3Params, &chaincfg.RegressionNetParams, &chaincfg.SigNetParams}

// CheckBitcoinPayee checks that s is a Bitcoin address a transfer can pay
// (a script address or a SegWit, Taproot or legacy key address) and
// returns it as recorded (bech32 in lowercase), or the problem. params,
// when set, is the network it must be an address of; nil accepts any
// Bitcoin network's (the service checks the item's network).
func CheckBitcoinPayee(s string, params *chaincfg.Params) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "is required"
	}
	if len(s) > 90 {
		return "", "is not a Bitcoin address"
	}
	if l := strings.ToLower(s); l == s || strings.ToUpper(s) == s {
		if i := strings.LastIndexByte(l, '1'); i > 0 {
			for _, p := range bitcoinNets {
				if l[:i] == p.Bech32HRPSegwit {
					s = l // bech32 is written in one case: kept in lowercase
				}
			}
		}
	}
	nets := bitcoinNets
	if params != nil {
		nets = []*chaincfg.Params{params}
	}
	for _, p := range nets {
		a, err := btcutil.DecodeAddress(s, p)
		if err == nil && a.IsForNet(p) {
			return s, ""
		}
	}
	if params != nil {
		for _, p := range bitcoinNets {
			if a, err := btcutil.DecodeAddress(s, p); err == nil && a.IsForNet(p) {
				return "", "is a Bitcoin address of " + p.Name + ", not of " + params.Name + ", the network this is paid on"
			}
		}
	}
	return "", "is not a Bitcoin address"
}

// checkPayeeOf checks an address given to pay an asset: a Bitcoin address
// for bitcoin, an EVM account otherwise.
func checkPayeeOf(bitcoin bool, s string) (string, string) {
	if bitcoin {
		return CheckBitcoinPayee(s, nil)
	}
	return CheckPayee(s)
}
