package attack

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// depositKeyOf is the deposit key tests/stacktest.Project set for a
// project's environment.
func depositKeyOf(t *testing.T, projectID string, live bool) (string, keys.Key) {
	t.Helper()
	seed := sha256.Sum256([]byte(fmt.Sprintf("%s/%v", projectID, live)))
	_, xpub, err := keys.NewDevKey(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.ParseKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	return xpub, k
}

// keyVariants are xpub serialized again with what derives nothing
// changed: the same public key and chain code, so the same addresses.
func keyVariants(t *testing.T, xpub string) map[string]string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(xpub)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := k.ECPubKey()
	parent := binary.BigEndian.AppendUint32(nil, k.ParentFingerprint())
	v := func(version []byte, depth uint8, parent []byte, child uint32) string {
		return hdkeychain.NewExtendedKey(version, pub.SerializeCompressed(), k.ChainCode(), parent, depth, child, false).String()
	}
	return map[string]string{
		"the exact key":        xpub,
		"another version":      v(chaincfg.TestNet3Params.HDPublicKeyID[:], k.Depth(), parent, k.ChildIndex()),
		"another depth":        v(k.Version(), k.Depth()+1, parent, k.ChildIndex()),
		"another parent":       v(k.Version(), k.Depth(), []byte{0xca, 0xfe, 0xba, 0xbe}, k.ChildIndex()),
		"another child number": v(k.Version(), k.Depth(), parent, k.ChildIndex()+1),
		"all four changed":     v([]byte{1, 2, 3, 4}, 0, []byte{0, 0, 0, 0}, 0),
	}
}

// envHeaders are the owner's cookie with the environment chosen.
func envHeaders(owner tenant, live bool) map[string]string {
	h := map[string]string{}
	for k, v := range owner.cookie {
		h[k] = v
	}
	if live {
		h[api.EnvironmentHeader] = "live"
	}
	return h
}

// Another project's owner sets the victim's deposit key, or any variant
// of it (another version, depth, parent fingerprint or child number: the
// same addresses), in either environment: 409 in the error envelope, and
// nothing changes; nor may the victim's own other environment take it.
// The victim's next sessions open on fresh addresses of its own key, its
// counter moving by one per session.
func TestADepositKeyDerivingAnotherProjectsAddressesIsRefused(t *testing.T) {
	victim, thief := newTenant(t, "Deposit key victim"), newTenant(t, "Deposit key thief")
	proj := "/api/v1/projects/"
	for _, victimLive := range []bool{false, true} {
		xpub, _ := depositKeyOf(t, victim.Project.ID, victimLive)
		for name, variant := range keyVariants(t, xpub) {
			for _, c := range []struct {
				who   string
				owner tenant
				live  bool
			}{{"another project's sandbox", thief, false}, {"another project's live", thief, true}, {"the project's other environment", victim, !victimLive}} {
				what := fmt.Sprintf("%s sets %s of the victim's %s key", c.who, name, envOf(victimLive))
				res, raw := call(t, "POST", proj+c.owner.Project.ID+"/deposit-key", "", []byte(`{"xpub":"`+variant+`"}`), envHeaders(c.owner, c.live))
				if res.StatusCode != http.StatusConflict || !strings.Contains(string(raw), "derives the addresses") {
					t.Errorf("%s: %d %s; want 409", what, res.StatusCode, raw)
				}
				assertEnvelopeError(t, what, raw)
				tally.add("tenancy: deposit keys", fmt.Sprintf("%s, %s → %d", c.who, name, res.StatusCode))
			}
		}
	}
	// Nothing changed: each environment of each project keeps its own key.
	for _, p := range []tenant{victim, thief} {
		for _, live := range []bool{false, true} {
			_, key := depositKeyOf(t, p.Project.ID, live)
			got := mustJSON(t, http.StatusOK)(call(t, "GET", proj+p.Project.ID+"/deposit-key", "", nil, envHeaders(p, live)))
			if got["fingerprint"] != key.Identity() {
				t.Fatalf("%s %s deposit key = %v; want its own (%s)", p.Project.Name, envOf(live), got, key.Identity())
			}
		}
	}
	// The victim's checkout still opens, on fresh addresses of its key.
	_, key := depositKeyOf(t, victim.Project.ID, false)
	before := mustJSON(t, http.StatusOK)(call(t, "GET", proj+victim.Project.ID+"/deposit-key", victim.SandboxKey, nil, nil))["addressesIssued"].(float64)
	plan := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+victim.Project.ID+"/payment-plans", victim.SandboxKey,
		[]byte(`{"title":"After the attempts","amountUsd":"10"}`), nil))
	for i := range 2 {
		s := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "",
			[]byte(`{"paymentPlanId":"`+str(plan["id"])+`"}`), nil))
		secrets.add(str(s["token"]))
		want, _ := key.DeriveAddress(uint32(before) + uint32(i))
		if !strings.EqualFold(str(s["depositAddress"]), want.Hex()) {
			t.Fatalf("session %d's address %v; want the key's next, %s", i, s["depositAddress"], want.Hex())
		}
	}
	after := mustJSON(t, http.StatusOK)(call(t, "GET", proj+victim.Project.ID+"/deposit-key", victim.SandboxKey, nil, nil))["addressesIssued"].(float64)
	if after != before+2 {
		t.Fatalf("addresses issued %v → %v; want two more (none burnt)", before, after)
	}
	tally.add("tenancy: deposit keys", "the victim's sessions after the attempts → 201 on the key's next addresses")
}

// A key replaced before identities were recorded (migration 00022 knows
// current keys only) is known by its addresses: another project setting
// a key whose first addresses the victim's sessions hold is refused.
func TestAKeyWithoutARecordedIdentityIsKnownByItsAddresses(t *testing.T) {
	ctx := context.Background()
	victim, thief := newTenant(t, "Old key victim"), newTenant(t, "Old key thief")
	xpub, key := depositKeyOf(t, victim.Project.ID, false)
	proj := "/api/v1/projects/" + victim.Project.ID
	plan := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/payment-plans", victim.SandboxKey, []byte(`{"title":"Old key","amountUsd":"10"}`), nil))
	s := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "", []byte(`{"paymentPlanId":"`+str(plan["id"])+`"}`), nil))
	secrets.add(str(s["token"]))
	if _, err := stack.Store.Pool().Exec(ctx, `DELETE FROM deposit_key_identities WHERE key_identity = $1`, key.Identity()); err != nil {
		t.Fatal(err)
	}
	for _, live := range []bool{false, true} {
		res, raw := call(t, "POST", "/api/v1/projects/"+thief.Project.ID+"/deposit-key", "", []byte(`{"xpub":"`+keyVariants(t, xpub)["another parent"]+`"}`), envHeaders(thief, live))
		if res.StatusCode != http.StatusConflict {
			t.Errorf("%s: a key whose addresses the victim's sessions hold: %d %s; want 409", envOf(live), res.StatusCode, raw)
		}
		assertEnvelopeError(t, "a key known by its addresses", raw)
		tally.add("tenancy: deposit keys", fmt.Sprintf("a key without a recorded identity, its addresses held by another's sessions → %d", res.StatusCode))
	}
}

func envOf(live bool) string {
	if live {
		return "live"
	}
	return "sandbox"
}

// The deposit key reveals every address it derives (the merchant's
// payments, and any other address of that wallet account): only the
// project's owner signed in to the dashboard reads it. An API key, a
// viewer's or developer's session, and an OAuth application acting for
// the owner read its fingerprint and first address only.
func TestTheDepositKeyIsReadByTheSignedInOwnerOnly(t *testing.T) {
	ctx := context.Background()
	victim := newTenant(t, "Deposit key reader")
	xpub, key := depositKeyOf(t, victim.Project.ID, false)
	first, _ := key.DeriveAddress(0)
	path := "/api/v1/projects/" + victim.Project.ID + "/deposit-key"
	readers := map[string]map[string]string{
		"the project's API key": {"Authorization": "Bearer " + victim.SandboxKey},
	}
	maps.Copy(readers, victim.memberSessions(t, "viewer", "developer"))
	for who, h := range readers {
		got := mustJSON(t, http.StatusOK)(call(t, "GET", path, "", nil, h))
		if got["xpub"] != nil || got["fingerprint"] != key.Identity() || got["firstAddress"] != first.Hex() {
			t.Errorf("%s reads %v; want no key, its fingerprint and first address", who, got)
		}
		if raw, _ := json.Marshal(got); strings.Contains(string(raw), xpub[4:]) {
			t.Errorf("%s reads the key: %s", who, raw)
		}
		tally.add("tenancy: reading a deposit key", who+" → fingerprint and first address, no key")
	}
	// An OAuth application with project:read, acting for the owner.
	app := payment.Principal{ProjectID: victim.Project.ID, UserID: victim.userID, Role: payment.RoleOwner}
	app.GrantID, app.Scopes = payment.NewID(payment.PrefixOAuthGrant, time.Now()), []string{"project:read"}
	if k, err := eng.Checkout().DepositKey(ctx, app, victim.Project.ID); err != nil || k.Xpub != "" || k.Fingerprint != key.Identity() {
		t.Errorf("an OAuth application reads %+v, %v; want no key, its fingerprint", k, err)
	}
	tally.add("tenancy: reading a deposit key", "an OAuth application for the owner → fingerprint and first address, no key")
	got := mustJSON(t, http.StatusOK)(call(t, "GET", path, "", nil, victim.cookie))
	if got["xpub"] != xpub || got["fingerprint"] != key.Identity() {
		t.Errorf("the signed-in owner reads %v; want the key", got)
	}
	tally.add("tenancy: reading a deposit key", "the owner signed in → the key")
}

// A collision stored before the checks (written around them here) is
// reported by the reconciliation: two environments sharing a key's
// identity, and a session's deposit address that is a plan's recipient.
func TestReconcileReportsStoredTenantCollisions(t *testing.T) {
	ctx := context.Background()
	first, later := newTenant(t, "Collision first"), newTenant(t, "Collision later")
	xpub, key := depositKeyOf(t, first.Project.ID, false)
	variant := keyVariants(t, xpub)["another parent"]
	if _, err := stack.Store.Pool().Exec(ctx, `UPDATE project_deposit_keys SET xpub = $2, key_identity = NULL WHERE project_id = $1 AND is_live`,
		later.Project.ID, variant); err != nil {
		t.Fatal(err)
	}
	proj := "/api/v1/projects/" + first.Project.ID
	plan := mustJSON(t, http.StatusCreated)(call(t, "POST", proj+"/payment-plans", first.SandboxKey, []byte(`{"title":"Collided","amountUsd":"10"}`), nil))
	session := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/checkout/sessions", "", []byte(`{"paymentPlanId":"`+str(plan["id"])+`"}`), nil))
	secrets.add(str(session["token"]))
	laterPlan := mustJSON(t, http.StatusCreated)(call(t, "POST", "/api/v1/projects/"+later.Project.ID+"/payment-plans", later.SandboxKey,
		[]byte(`{"title":"Its recipient","amountUsd":"10"}`), nil))
	if _, err := stack.Store.Pool().Exec(ctx, `UPDATE payment_plans SET recipient_address = $2 WHERE id = $1`,
		str(laterPlan["id"]), str(session["depositAddress"])); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scope string
		want  map[string]string // kind → what the detail must say
	}{
		{first.Project.ID, map[string]string{service.FindingDepositKeyShared: "the key of " + later.Project.ID + " live; it was set here first",
			service.FindingDepositAddressIsRecipient: "recipient address of payment plan " + str(laterPlan["id"])}},
		{later.Project.ID, map[string]string{service.FindingDepositKeyShared: first.Project.ID + " sandbox set it first",
			service.FindingDepositAddressIsRecipient: str(session["depositAddress"])}},
	} {
		findings, err := eng.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: c.scope})
		if err != nil {
			t.Fatal(err)
		}
		for kind, want := range c.want {
			found := false
			for _, f := range findings {
				if f.Kind == kind && strings.Contains(f.Detail, want) && (kind != service.FindingDepositKeyShared || strings.Contains(f.Detail, key.Identity())) {
					found = true
				}
			}
			if !found {
				t.Errorf("reconcile --project %s: no %s finding saying %q: %+v", c.scope, kind, want, findings)
			}
		}
		// Reported, never repaired.
		repaired, err := eng.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: c.scope, Repair: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range repaired {
			if (f.Kind == service.FindingDepositKeyShared || f.Kind == service.FindingDepositAddressIsRecipient) && (f.Repaired || f.Error == "") {
				t.Errorf("a collision repaired: %+v", f)
			}
		}
	}
	tally.add("tenancy: stored collisions", "a shared key and a deposit address that is a recipient → reported by admin reconcile")
}

// bitcoinKeyOf is the account key of xpub (its public key and chain
// code) as a test network's native SegWit key, a vpub: what a Bitcoin
// wallet would export of the same account.
func bitcoinKeyOf(t *testing.T, xpub string) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(xpub)
	if err != nil {
		t.Fatal(err)
	}
	k.SetNet(&chaincfg.TestNet3Params)
	key, err := btckeys.ParseKey(k.String(), btckeys.SegWit)
	if err != nil {
		t.Fatal(err)
	}
	return key.Canonical()
}

// A Bitcoin account key is one project environment's own as an EVM key
// is, in the same space: another project's owner setting the victim's
// Bitcoin key (as a vpub or a tpub), or the victim's EVM key written as a
// Bitcoin key, or the victim's Bitcoin key as an EVM key, is refused
// with 409 in the error envelope, and the victim's keys stay. An API key
// reads the Bitcoin key's fingerprint and first address, never the key.
func TestABitcoinKeyOfAnotherProjectIsRefused(t *testing.T) {
	victim, thief := newTenant(t, "Bitcoin key victim"), newTenant(t, "Bitcoin key thief")
	proj := "/api/v1/projects/"
	evm, _ := depositKeyOf(t, victim.Project.ID, false)
	seed := sha256.Sum256([]byte(victim.Project.ID + "/bitcoin"))
	_, own, err := keys.NewDevKey(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	vpub := bitcoinKeyOf(t, own)
	set := mustJSON(t, http.StatusOK)(call(t, "POST", proj+victim.Project.ID+"/bitcoin-deposit-key", "", []byte(`{"xpub":"`+vpub+`"}`), envHeaders(victim, false)))
	if set["xpub"] != vpub || set["addressType"] != "p2wpkh" || !strings.HasPrefix(str(set["firstAddress"]), "tb1q") {
		t.Fatalf("the victim's Bitcoin key = %v", set)
	}
	tpub := keyVariants(t, own)["another version"]
	for _, c := range []struct{ what, path, key string }{
		{"the victim's Bitcoin key", "/bitcoin-deposit-key", vpub},
		{"the victim's Bitcoin key as a tpub", "/bitcoin-deposit-key", tpub},
		{"the victim's EVM key as a Bitcoin key", "/bitcoin-deposit-key", bitcoinKeyOf(t, evm)},
		{"the victim's Bitcoin key as an EVM key", "/deposit-key", own},
	} {
		res, raw := call(t, "POST", proj+thief.Project.ID+c.path, "", []byte(`{"xpub":"`+c.key+`"}`), envHeaders(thief, false))
		if res.StatusCode != http.StatusConflict || !strings.Contains(string(raw), "derives the addresses") {
			t.Errorf("another project's owner sets %s: %d %s; want 409", c.what, res.StatusCode, raw)
		}
		assertEnvelopeError(t, c.what, raw)
		tally.add("tenancy: Bitcoin keys", fmt.Sprintf("another project sets %s → %d", c.what, res.StatusCode))
	}
	got := mustJSON(t, http.StatusOK)(call(t, "GET", proj+victim.Project.ID+"/bitcoin-deposit-key", victim.SandboxKey, nil, nil))
	if got["xpub"] != nil || got["fingerprint"] != set["fingerprint"] || got["firstAddress"] != set["firstAddress"] {
		t.Errorf("the victim's API key reads %v; want its fingerprint and first address, no key", got)
	}
	if raw, _ := json.Marshal(got); strings.Contains(string(raw), vpub[4:]) {
		t.Errorf("an API key reads the Bitcoin key: %s", raw)
	}
	if got := mustJSON(t, http.StatusOK)(call(t, "GET", proj+thief.Project.ID+"/bitcoin-deposit-key", "", nil, envHeaders(thief, false))); got["fingerprint"] != nil {
		t.Errorf("the thief's project holds a Bitcoin key after the attempts: %v", got)
	}
	res, raw := call(t, "GET", proj+victim.Project.ID+"/bitcoin-deposit-key", thief.SandboxKey, nil, nil)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("another project's API key reads the victim's Bitcoin key: %d %s; want 404", res.StatusCode, raw)
	}
	tally.add("tenancy: Bitcoin keys", fmt.Sprintf("another project's API key reads the victim's → %d", res.StatusCode))
}

// A Bitcoin key stored with another project's identity, written around
// the check, is reported by the reconciliation as an EVM key's is.
func TestReconcileReportsAStoredBitcoinKeyOfAnothersAccount(t *testing.T) {
	ctx := context.Background()
	first, later := newTenant(t, "Bitcoin collision first"), newTenant(t, "Bitcoin collision later")
	xpub, key := depositKeyOf(t, first.Project.ID, false)
	if _, err := stack.Store.Pool().Exec(ctx, `INSERT INTO project_bitcoin_keys (project_id, is_live, xpub, address_type, key_identity, created_at)
		VALUES ($1, false, $2, 'p2wpkh', '', now())`, later.Project.ID, bitcoinKeyOf(t, xpub)); err != nil {
		t.Fatal(err)
	}
	for scope, want := range map[string]string{
		first.Project.ID: "the key of " + later.Project.ID + " sandbox (Bitcoin); it was set here first",
		later.Project.ID: "the sandbox deposit key (Bitcoin) (fingerprint " + key.Identity() + ") derives the same addresses as the key of " + first.Project.ID + " sandbox",
	} {
		findings, err := eng.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: scope})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range findings {
			found = found || f.Kind == service.FindingDepositKeyShared && strings.Contains(f.Detail, want)
		}
		if !found {
			t.Errorf("reconcile --project %s: no %s finding saying %q: %+v", scope, service.FindingDepositKeyShared, want, findings)
		}
	}
	tally.add("tenancy: stored collisions", "a Bitcoin key of another project's account → reported by admin reconcile")
}
