package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/paymentsd/paymentsd/store"
)

func needDatabase(c config) error {
	if c.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set")
	}
	return nil
}

func runMigrate(ctx context.Context) error {
	c, err := loadProductionConfig()
	if err != nil {
		return err
	}
	if err := needDatabase(c); err != nil {
		return err
	}
	if err := store.Migrate(ctx, c.DatabaseURL); err != nil {
		return err
	}
	fmt.Println("migrations applied")
	return nil
}
