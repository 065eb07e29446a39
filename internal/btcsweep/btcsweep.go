// Package btcsweep moves the bitcoin held at a merchant's deposit
// addresses to one destination without the engine holding a key: Build
// makes a PSBT (BIP174) from the account's public key, which any signer
// holding the account's private key can sign (a hardware wallet, or Sign
// with a key file on the merchant's machine).
package btcsweep

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/keys"
)

// Coin is bitcoin held at a deposit address: an unspent output paying
// deposit address Index of the account key.
type Coin struct {
	Out   wire.OutPoint
	Sats  int64
	Index uint32
}

// dust is the smallest output the network relays to a SegWit address.
const dust = 330

// VSize estimates the virtual size of a transaction spending inputs
// native SegWit outputs to outputs outputs (a Taproot output is the
// largest kind: 43 vbytes).
func VSize(inputs, outputs int) int64 { return 11 + InputVSize*int64(inputs) + 43*int64(outputs) }

// Build returns an unsigned PSBT spending coins, of deposit addresses of
// key on the network of params, to dest, less the fee at feeRate
// satoshis per virtual byte, and that fee. Each input carries the output
// it spends and the path of its key below the account key (0/index,
// under the account key's fingerprint): all a signer needs.
func Build(key btckeys.Key, params *chaincfg.Params, coins []Coin, dest btcutil.Address, feeRate int64) (*psbt.Packet, int64, error) {
	if key.Kind != btckeys.SegWit {
		return nil, 0, errors.New("only native SegWit deposit addresses are swept")
	}
	if len(coins) == 0 {
		return nil, 0, errors.New("no coin to sweep")
	}
	if feeRate < 1 {
		return nil, 0, fmt.Errorf("fee rate %d: want at least 1 sat/vB", feeRate)
	}
	if !dest.IsForNet(params) {
		return nil, 0, fmt.Errorf("the destination %s is not an address of %s", dest, params.Name)
	}
	to, err := txscript.PayToAddrScript(dest)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	ins := make([]*wire.OutPoint, len(coins))
	seqs := make([]uint32, len(coins))
	for i, c := range coins {
		ins[i], seqs[i] = &c.Out, wire.MaxTxInSequenceNum-2 // replaceable: a stuck sweep can be bumped
		total += c.Sats
	}
	fee := feeRate * VSize(len(coins), 1)
	if total-fee < dust {
		return nil, 0, fmt.Errorf("the coins (%d sats) do not cover the fee of %d sats at %d sat/vB", total, fee, feeRate)
	}
	p, err := psbt.New(ins, []*wire.TxOut{wire.NewTxOut(total-fee, to)}, 2, 0, seqs)
	if err != nil {
		return nil, 0, err
	}
	u, err := psbt.NewUpdater(p)
	if err != nil {
		return nil, 0, err
	}
	for i, c := range coins {
		addr, err := key.DeriveAddress(c.Index, params)
		if err != nil {
			return nil, 0, err
		}
		script, err := txscript.PayToAddrScript(addr)
		if err != nil {
			return nil, 0, err
		}
		pub, err := key.PublicKey(c.Index)
		if err != nil {
			return nil, 0, err
		}
		if err := u.AddInWitnessUtxo(wire.NewTxOut(c.Sats, script), i); err != nil {
			return nil, 0, err
		}
		if err := u.AddInSighashType(txscript.SigHashAll, i); err != nil {
			return nil, 0, err
		}
		if err := u.AddInBip32Derivation(key.Fingerprint(), []uint32{0, c.Index}, pub, i); err != nil {
			return nil, 0, err
		}
	}
	return p, fee, nil
}

// Account reads an account's extended private key, and returns it with
// its public key, whose deposit addresses it spends.
func Account(xprv string) (*hdkeychain.ExtendedKey, btckeys.Key, error) {
	// A BIP84 wallet exports zprv (vprv on the test networks): the same
	// key as an xprv (tprv) under another version.
	if payload, version, err := base58.CheckDecode(xprv); err == nil && len(payload) == 77 {
		switch [4]byte{version, payload[0], payload[1], payload[2]} {
		case [4]byte{0x04, 0xb2, 0x43, 0x0c}: // zprv
			xprv = base58.CheckEncode(append([]byte{0x88, 0xad, 0xe4}, payload[3:]...), 0x04)
		case [4]byte{0x04, 0x5f, 0x18, 0xbc}: // vprv
			xprv = base58.CheckEncode(append([]byte{0x35, 0x83, 0x94}, payload[3:]...), 0x04)
		}
	}
	account, err := hdkeychain.NewKeyFromString(xprv)
	if err != nil || !account.IsPrivate() {
		return nil, btckeys.Key{}, errors.New("not an extended private key")
	}
	pub, err := account.Neuter()
	if err != nil {
		return nil, btckeys.Key{}, err
	}
	key, err := btckeys.ParseKey(pub.String(), btckeys.SegWit)
	return account, key, err
}

// Sign signs every input of p with the account's extended private key,
// finalizes them and returns the transaction to broadcast. A key that is
// not the account of p's inputs is refused, and so is an input whose
// public key its path does not derive.
func Sign(p *psbt.Packet, xprv string) (*wire.MsgTx, error) {
	account, key, err := Account(xprv)
	if err != nil {
		return nil, err
	}
	prevs := txscript.NewMultiPrevOutFetcher(nil)
	for i, in := range p.Inputs {
		if in.WitnessUtxo == nil {
			return nil, fmt.Errorf("input %d: the output it spends is missing", i)
		}
		prevs.AddPrevOut(p.UnsignedTx.TxIn[i].PreviousOutPoint, in.WitnessUtxo)
	}
	hashes := txscript.NewTxSigHashes(p.UnsignedTx, prevs)
	u, err := psbt.NewUpdater(p)
	if err != nil {
		return nil, err
	}
	for i, in := range p.Inputs {
		if len(in.Bip32Derivation) != 1 || in.Bip32Derivation[0].MasterKeyFingerprint != key.Fingerprint() ||
			len(in.Bip32Derivation[0].Bip32Path) != 2 || in.Bip32Derivation[0].Bip32Path[0] != 0 {
			return nil, fmt.Errorf("input %d is not a deposit address of this account key", i)
		}
		child, err := keys.Child(account, in.Bip32Derivation[0].Bip32Path[1])
		if err != nil {
			return nil, err
		}
		priv, err := child.ECPrivKey()
		if err != nil {
			return nil, err
		}
		pubKey := priv.PubKey().SerializeCompressed()
		if string(pubKey) != string(in.Bip32Derivation[0].PubKey) {
			return nil, fmt.Errorf("input %d: its path does not derive its public key", i)
		}
		sig, err := txscript.RawTxInWitnessSignature(p.UnsignedTx, hashes, i, in.WitnessUtxo.Value, in.WitnessUtxo.PkScript, txscript.SigHashAll, priv)
		if err != nil {
			return nil, err
		}
		if _, err := u.Sign(i, sig, pubKey, nil, nil); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	if err := psbt.MaybeFinalizeAll(p); err != nil {
		return nil, err
	}
	return psbt.Extract(p)
}
