package oauth

import (
	"maps"
	"time"

	"github.com/ory/fosite"

	"github.com/paymentsd/paymentsd/payment"
)

// Session is what a grant binds its codes and tokens to: one user, one
// project, one environment. Role is the user's role in the project when
// an access token was read (a token acts with the user's role of the day:
// a user removed from the project takes the token's access with them).
type Session struct {
	UserID    string                         `json:"userId"`
	ProjectID string                         `json:"projectId"`
	IsLive    bool                           `json:"isLive"`
	ExpiresAt map[fosite.TokenType]time.Time `json:"expiresAt"`

	Role       payment.Role `json:"-"`
	LastUsedAt *time.Time   `json:"-"`
}

var _ fosite.Session = (*Session)(nil)

func (s *Session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	s.ExpiresAt[key] = exp
}

func (s *Session) GetExpiresAt(key fosite.TokenType) time.Time {
	return s.ExpiresAt[key]
}

// GetUsername is the user's ID, for introspection.
func (s *Session) GetUsername() string { return s.UserID }

// GetSubject is the user's ID, for introspection.
func (s *Session) GetSubject() string { return s.UserID }

func (s *Session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	return &c
}

// GetExtraClaims are the grant's project and environment, in an
// introspection response.
func (s *Session) GetExtraClaims() map[string]any {
	env := "sandbox"
	if s.IsLive {
		env = "live"
	}
	return map[string]any{"project_id": s.ProjectID, "environment": env}
}
