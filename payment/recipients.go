package payment

import (
	"fmt"
	"strings"
	"time"
)

// Audit actions of recipient ownership.
const (
	AuditRecipientClaimed  = "recipient.claimed"
	AuditRecipientVerified = "recipient.verified"
	AuditRecipientRemoved  = "recipient.removed"
)

func init() {
	AuditActions = append(AuditActions, AuditRecipientClaimed, AuditRecipientVerified, AuditRecipientRemoved)
}

// RecipientChallengeTTL is how long a recipient's challenge can be signed.
const RecipientChallengeTTL = 15 * time.Minute

// DefaultMaxOpenHolds is how many sessions of one plan may hold an amount
// on its recipient at once when RECIPIENT_MAX_OPEN_HOLDS is not set; it
// also bounds how much more than the plan's amount a customer is asked,
// in base units.
const DefaultMaxOpenHolds = 1000

// Recipient is an address a project has claimed as a recipient of its
// second-shape plans in one environment: verified once the project has
// proven it controls it (a signed challenge), pending until then. One
// project owns an address per environment.
type Recipient struct {
	ProjectID string
	IsLive    bool
	// Address is checksummed (EIP-55).
	Address            string
	Challenge          string
	ChallengeExpiresAt time.Time
	VerifiedAt         *time.Time
	// Method is how it was verified: "eip191" or "eip1271"; "" pending.
	Method    string
	CreatedAt time.Time
}

// Verified tells whether the project has proven it controls the address.
func (r Recipient) Verified() bool { return r.VerifiedAt != nil }

// RecipientChallenge is the message a project's owner signs to prove
// control of address (EIP-4361 style text, signed with personal_sign or
// approved by a contract wallet, EIP-1271). It names the deployment's
// host, the project, the environment, the address, a nonce and its
// expiry, so that a signature proves this one claim and no other.
func RecipientChallenge(host, projectID string, isLive bool, address, nonce string, issued, expires time.Time) string {
	env := "sandbox"
	if isLive {
		env = "live"
	}
	if host == "" {
		host = "paymentsd"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s asks you to prove that you control this address, to receive payments for a project.\n\n", host)
	fmt.Fprintf(&b, "Address: %s\n", address)
	fmt.Fprintf(&b, "Project: %s\n", projectID)
	fmt.Fprintf(&b, "Environment: %s\n", env)
	fmt.Fprintf(&b, "Nonce: %s\n", nonce)
	fmt.Fprintf(&b, "Issued At: %s\n", issued.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Expiration Time: %s", expires.UTC().Format(time.RFC3339))
	return b.String()
}

// RecipientNotVerified is the 422 of a plan (or a session of a plan) whose
// recipient its project has not verified in its environment.
func RecipientNotVerified(field, address string) error {
	var probs Problems
	probs.Add(field, "the project has not verified that it controls "+address+" in this environment: "+
		"claim it (POST /api/v1/projects/{projectId}/recipients {\"address\"}), sign the challenge with the address's wallet "+
		"and send the signature (POST …/recipients/{address}/verify {\"signature\"}), as an owner of the project; "+
		"or in the dashboard, Settings → Recipients")
	return probs.Err()
}
