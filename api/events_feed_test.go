package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store/storetest"
)

type feedAnswer struct {
	StatusCode int
	Data       []struct{ ID, Type, Timestamp string }
	Meta       struct {
		NextCursor string
		Pagination *rest.Pagination
	}
	Error *struct {
		Code    string
		Details []payment.FieldError
	}
}

// A consumer back from an outage reads every event since a time with
// GET …/events?since=…, then follows meta.nextCursor page by page, and
// keeps polling with the last one: it gets each event once, oldest first,
// and the ones written later. The page list (newest first) is unchanged;
// bad parameters are 422s naming them.
func TestEventsSinceAndCursor(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	svc := service.New(service.Deps{Store: st})
	p, err := svc.Checkout().CreateProject(ctx, "Feed shop")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(svc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	base := ts.URL + "/api/v1/projects/" + p.Project.ID + "/events"

	t0 := time.Date(2030, 1, 31, 12, 0, 0, 0, time.UTC)
	write := func(id string, at time.Time) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
			VALUES ($1,$2,false,'payment_plan.updated',$1,1,'{}',$3)`, id, p.Project.ID, at); err != nil {
			t.Fatal(err)
		}
	}
	get := func(query url.Values, wantEvents int) feedAnswer {
		t.Helper()
		var out feedAnswer
		// An event is readable once older transactions on the cluster have ended.
		testwait.Until(t, 10*time.Second, func() (bool, string) {
			req, _ := http.NewRequest(http.MethodGet, base+"?"+query.Encode(), nil)
			req.Header.Set("Authorization", "Bearer "+p.SandboxKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out = feedAnswer{}
			err = json.NewDecoder(res.Body).Decode(&out)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			return out.StatusCode != http.StatusOK || len(out.Data) >= wantEvents,
				fmt.Sprintf("%v: %d events, want %d", query, len(out.Data), wantEvents)
		})
		return out
	}
	ids := func(a feedAnswer) []string {
		var out []string
		for _, d := range a.Data {
			out = append(out, d.ID)
		}
		return out
	}
	write("evt_a", t0.Add(-time.Hour))
	write("evt_b", t0)
	write("evt_c", t0.Add(-time.Minute)) // written after b, but from before since
	write("evt_d", t0.Add(time.Minute))
	write("evt_e", t0.Add(2*time.Minute))

	first := get(url.Values{"since": {"2030-01-31T12:00:00Z"}, "limit": {"2"}}, 2)
	pg := first.Meta.Pagination
	if !slices.Equal(ids(first), []string{"evt_b", "evt_d"}) || first.Meta.NextCursor == "" || pg == nil ||
		pg.Total != 3 || !pg.HasNextPage || pg.HasPreviousPage || pg.Limit != 2 {
		t.Fatalf("first page: %v %+v %+v", ids(first), first.Meta, pg)
	}
	second := get(url.Values{"after": {first.Meta.NextCursor}, "since": {"2030-01-31T12:00:00Z"}, "limit": {"2"}}, 1)
	if pg := second.Meta.Pagination; !slices.Equal(ids(second), []string{"evt_e"}) || pg.HasNextPage || !pg.HasPreviousPage ||
		pg.Total != 1 || second.Meta.NextCursor == "" {
		t.Fatalf("second page: %v %+v %+v", ids(second), second.Meta, second.Meta.Pagination)
	}
	empty := get(url.Values{"after": {second.Meta.NextCursor}}, 0)
	if len(empty.Data) != 0 || empty.Meta.NextCursor == "" || empty.Meta.Pagination.HasNextPage {
		t.Fatalf("at the end: %v %+v", ids(empty), empty.Meta)
	}
	write("evt_f", t0.Add(3*time.Minute))
	later := get(url.Values{"after": {empty.Meta.NextCursor}}, 1)
	if !slices.Equal(ids(later), []string{"evt_f"}) {
		t.Fatalf("polled later: %v", ids(later))
	}

	// The page list: newest first, as before.
	list := get(url.Values{"limit": {"2"}}, 2)
	if !slices.Equal(ids(list), []string{"evt_f", "evt_e"}) || list.Meta.NextCursor != "" || list.Meta.Pagination.Total != 6 {
		t.Fatalf("page list: %v %+v", ids(list), list.Meta)
	}

	for _, c := range []struct {
		query url.Values
		field string
	}{
		{url.Values{"since": {"yesterday"}}, "since"},
		{url.Values{"after": {"not-a-cursor"}}, "after"},
		{url.Values{"after": {payment.EventCursor{XID: 1, Seq: -1}.String()}}, "after"},
		{url.Values{"since": {"2030-01-31T12:00:00Z"}, "page": {"2"}}, "page"},
		{url.Values{"after": {first.Meta.NextCursor}, "limit": {"101"}}, "limit"},
	} {
		a := get(c.query, 0)
		if a.StatusCode != http.StatusUnprocessableEntity || a.Error == nil || a.Error.Code != "VALIDATION_ERROR" ||
			len(a.Error.Details) != 1 || a.Error.Details[0].Field != c.field {
			t.Errorf("%v: %d %+v, want a 422 naming %s", c.query, a.StatusCode, a.Error, c.field)
		}
	}
}
