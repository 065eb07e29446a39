package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// runCreateUser is `paymentsd admin create-user`: an account for
// deployments with sign-up switched off. The password is read from stdin
// (its first line), never from a flag.
func runCreateUser(ctx context.Context, stdin io.Reader, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("create-user", flag.ContinueOnError)
	email := fs.String("email", "", "the account's email")
	ownerOf := fs.String("owner-of", "", "a project the account owns")
	if err := fs.Parse(args); err != nil {
		return err
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	e, closeStore, err := adminService(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	u, err := e.Identity().CreateUser(ctx, *email, strings.TrimRight(line, "\r\n"))
	if err != nil {
		return err
	}
	if *ownerOf != "" {
		if err := e.Access().AddOwner(ctx, *ownerOf, u.ID); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "user %s (%s) created\n", u.ID, u.Email)
	return nil
}
