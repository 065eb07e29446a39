package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// branch returns consecutive blocks from..to, each the child of the one
// before; fork tells blocks of different branches apart.
func branch(from, to uint64, fork byte) []chainwatch.Block {
	var blocks []chainwatch.Block
	for n := from; n <= to; n++ {
		b := chainwatch.Block{Number: n, Hash: common.Hash{0: fork, 31: byte(n)}}
		if n > 0 {
			b.Parent = common.Hash{0: fork, 31: byte(n - 1)}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// newestFirst returns blocks in the order Kept gives them.
func newestFirst(blocks ...[]chainwatch.Block) []chainwatch.Block {
	all := slices.Concat(blocks...)
	slices.SortFunc(all, func(a, b chainwatch.Block) int { return int(b.Number) - int(a.Number) })
	return all
}

// The scanned blocks of a network are what its poller remembers of the
// chain: saving a rescan replaces the blocks a rewind abandoned, the window
// drops the oldest, and each network keeps its own.
func TestScannedBlocks(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	base, other := st.Chains().ScannedBlocks("base"), st.Chains().ScannedBlocks("other")
	check := func(step string, want []chainwatch.Block) {
		t.Helper()
		got, err := base.Kept(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: kept %v, want %v", step, got, want)
		}
	}
	check("before the first scan", nil)

	if err := base.SaveBlocks(ctx, branch(10, 15, 'a'), 0); err != nil {
		t.Fatal(err)
	}
	if err := other.SaveBlocks(ctx, branch(1, 3, 'o'), 0); err != nil {
		t.Fatal(err)
	}
	check("first scan", newestFirst(branch(10, 15, 'a')))

	// A reorg rewound to 12: 13 onwards are rescanned on the new branch.
	if err := base.SaveBlocks(ctx, branch(13, 14, 'b'), 0); err != nil {
		t.Fatal(err)
	}
	check("rescan after a reorg", newestFirst(branch(10, 12, 'a'), branch(13, 14, 'b')))

	if err := base.SaveBlocks(ctx, branch(15, 18, 'b'), 14); err != nil {
		t.Fatal(err)
	}
	check("window", newestFirst(branch(14, 18, 'b')))

	if err := base.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	check("reset", nil)
	if got, err := other.Kept(ctx); err != nil || !slices.Equal(got, newestFirst(branch(1, 3, 'o'))) {
		t.Fatalf("another network's blocks = %v, %v", got, err)
	}
}
