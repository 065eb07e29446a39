package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
)

func runSetDepositKey(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("set-deposit-key", flag.ContinueOnError)
	project := fs.String("project", "", "project ID")
	env := fs.String("env", "sandbox", "environment: sandbox or live")
	xpub := fs.String("xpub", "", "extended public key (xpub…) of the account, e.g. m/44'/60'/0'; with --bitcoin, m/84'/0'/0' (zpub…, vpub… for the sandbox)")
	bitcoin := fs.Bool("bitcoin", false, "set the project's Bitcoin account key (BIP84, or BIP86 with --address-type p2tr)")
	addressType := fs.String("address-type", "", "with --bitcoin: p2wpkh (native SegWit, the default) or p2tr (Taproot)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkEnv(*env); err != nil {
		return err
	}
	e, closeStore, err := adminService(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	if *bitcoin {
		if err := e.Checkout().SetBitcoinKey(adminOrigin(ctx), *project, *env == "live", *xpub, *addressType); err != nil {
			return err
		}
		fmt.Printf("Bitcoin deposit key set for %s (%s)\n", *project, *env)
		return nil
	}
	if *addressType != "" {
		return errors.New("--address-type is for a Bitcoin key (--bitcoin)")
	}
	if err := e.Checkout().SetDepositKey(adminOrigin(ctx), *project, *env == "live", *xpub); err != nil {
		return err
	}
	fmt.Printf("deposit key set for %s (%s)\n", *project, *env)
	return nil
}
