package auth

import (
	"strings"
	"testing"
)

func TestPasswordHashing(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q: want argon2id with OWASP's parameters", h)
	}
	if !CheckPassword(h, "correct horse battery") || CheckPassword(h, "correct horse batterz") {
		t.Fatal("the hash checks the wrong passwords")
	}
	other, _ := HashPassword("correct horse battery")
	if other == h {
		t.Fatal("two hashes of one password are the same: no salt")
	}
	for _, bad := range []string{"", "$argon2id$v=19$m=0,t=2,p=1$AA$AA", "$bcrypt$…", h[:len(h)-10]} {
		if CheckPassword(bad, "correct horse battery") {
			t.Fatalf("%q matched", bad)
		}
	}
	if CheckPasswordRules("short") == "" || CheckPasswordRules(strings.Repeat("x", 257)) == "" || CheckPasswordRules("long enough pw") != "" {
		t.Fatal("password rules")
	}
}
