package main

import (
	"fmt"
	"io"

	"github.com/paymentsd/paymentsd/internal/version"
)

// runVersion is `paymentsd version`: the release and the revision built.
func runVersion(out io.Writer) error {
	_, err := fmt.Fprintf(out, "paymentsd %s\n", version.String())
	return err
}
