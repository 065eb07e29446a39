package payments

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/store"
)

// Overview is a project's overview in one environment: the payments of
// today and of this month (in loc), its sessions by status and what needs
// the merchant.
type Overview struct {
	Location          *time.Location
	Today, MonthStart time.Time
	store.Overview
}

// Overview sums up the principal's environment of a project, with days
// and months in loc.
func (svc Service) Overview(ctx context.Context, p payment.Principal, projectID string, loc *time.Location) (Overview, error) {
	if err := core.Owns(p, projectID); err != nil {
		return Overview{}, err
	}
	now := svc.Now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	o, err := svc.Store.Payments().Overview(ctx, p, today, month)
	return Overview{Location: loc, Today: today, MonthStart: month, Overview: o}, err
}

// ExportTransactions calls fn with every transaction the query's filters
// keep, newest first, unpaginated.
func (svc Service) ExportTransactions(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery, fn func(payment.Transaction) error) error {
	if err := core.Owns(p, projectID); err != nil {
		return err
	}
	return svc.Store.Payments().EachTransaction(ctx, p, q, fn)
}

// ExportSessions is ExportTransactions for checkout sessions, each with
// what it received per asset.
func (svc Service) ExportSessions(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery, fn func(payment.Session, string) error) error {
	if err := core.Owns(p, projectID); err != nil {
		return err
	}
	return svc.Store.Payments().EachSession(ctx, p, q, fn)
}
