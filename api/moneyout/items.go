package moneyout

import (
	"context"
	"io"
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// itemOp is a service operation on one item of a project: a refund, a
// payout, a payout batch.
type itemOp[T any] func(service.MoneyOut, context.Context, payment.Principal, string, string) (T, error)

// answerItem runs op on the item the path names (projectId, and idParam)
// and answers 200 with done and the item's view: a read, a cancellation,
// an approval.
func answerItem[T, V any](s Handlers, w http.ResponseWriter, r *http.Request, idParam, done string, op itemOp[T], view func(T) V) error {
	item, err := op(s.Svc.MoneyOut(), r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue(idParam))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, done, view(item))
	return nil
}

// answerReportSent reads {txHash} and records it as the transaction sent
// for the item the path names, with report; it answers 200 with done and
// the item's view.
func answerReportSent[T, V any](s Handlers, w http.ResponseWriter, r *http.Request, idParam, done string,
	report func(service.MoneyOut, context.Context, payment.Principal, string, string, string) (T, error), view func(T) V) error {
	body, _ := io.ReadAll(r.Body)
	hash, err := rest.DecodeString(body, "txHash")
	if err != nil {
		return rest.DecodeErr(w, r, err)
	}
	item, err := report(s.Svc.MoneyOut(), r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue(idParam), hash)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, done, view(item))
	return nil
}
